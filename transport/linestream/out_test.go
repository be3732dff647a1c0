package linestream

import "testing"

// TestWokenNotStuckBehindTryFlush: the output side woken while the input
// side's tryFlush is writing finds a flusher running and returns; what is
// queued after that must still wake it. The woken flag once stayed set
// there, so frames queued by workers afterwards woke nobody, and a stdio
// connection whose requests all waited for those frames stalled until the
// client sent something (found by make soak: sleep+progress calls on
// stdio timed out together).
func TestWokenNotStuckBehindTryFlush(t *testing.T) {
	for i, partial := range []bool{false, true} {
		q := &outQueue{max: 1 << 20}
		if wake, err := q.appendFrame([]byte("a")); !wake || err != nil {
			t.Fatalf("%d: first frame: wake %v, %v", i, wake, err)
		}
		var written []byte
		write := func(b []byte) (int, error) { written = append(written, b...); return len(b), nil }
		try := func(b []byte) (int, error) {
			// The woken output side runs now, while this write is on.
			if err := q.flush(write); err != nil {
				t.Fatal(err)
			}
			if partial {
				written = append(written, b[:1]...)
				return 1, nil // the peer took one byte: the rest waits
			}
			written = append(written, b...)
			return len(b), nil
		}
		wake, err := q.tryFlush(try)
		if err != nil {
			t.Fatal(err)
		}
		if partial {
			// Only the output side can write the rest: it must be woken.
			if !wake {
				t.Fatalf("%d: a partial try-write left bytes queued and woke nobody", i)
			}
			if err := q.flush(write); err != nil {
				t.Fatal(err)
			}
		} else if wake {
			t.Fatalf("%d: everything was written, yet a wake was asked for", i)
		}
		if string(written) != "a\n" {
			t.Fatalf("%d: written %q", i, written)
		}
		// A worker's frame now: the output side must be woken for it.
		if wake, err := q.appendFrame([]byte("b")); !wake || err != nil {
			t.Fatalf("%d: a frame queued on an idle connection woke nobody (wake %v, %v)", i, wake, err)
		}
	}
}
