package linestream

import (
	"testing"

	"github.com/mcpwire/mcpwire/framing"
)

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
			if err := q.flush(nil, write); err != nil {
				t.Fatal(err)
			}
			if partial {
				written = append(written, b[:1]...)
				return 1, nil // the peer took one byte: the rest waits
			}
			written = append(written, b...)
			return len(b), nil
		}
		wake, err := q.tryFlush(nil, try)
		if err != nil {
			t.Fatal(err)
		}
		if partial {
			// Only the output side can write the rest: it must be woken.
			if !wake {
				t.Fatalf("%d: a partial try-write left bytes queued and woke nobody", i)
			}
			if err := q.flush(nil, write); err != nil {
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

// TestOutBufferSizedFromLastBatch: a busy connection's next batch starts in
// a buffer as large as its last one (no 4 KiB → 16 KiB → 64 KiB growth
// through copies on every batch), bounded by maxHint, while an idle one
// still holds no buffer.
func TestOutBufferSizedFromLastBatch(t *testing.T) {
	q := &outQueue{max: 4 << 20}
	frame := make([]byte, 255)
	for i := range frame {
		frame[i] = 'x'
	}
	write := func(b []byte) (int, error) { return len(b), nil }
	for range 2 {
		for range 64 { // 16 KiB: one batch of 64 replies
			if _, err := q.appendFrame(frame); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.flush(nil, write); err != nil {
			t.Fatal(err)
		}
		if q.buf != nil || q.spare != nil {
			t.Fatal("an idle queue holds a buffer")
		}
	}
	if _, err := q.appendFrame(frame); err != nil {
		t.Fatal(err)
	}
	if cap(q.buf) < 64*256 {
		t.Fatalf("the next batch starts in %d bytes after a batch of %d", cap(q.buf), 64*256)
	}
	_ = q.flush(nil, write)
	// A batch over the bound: the next one starts at the bound, not at
	// the batch's size.
	big := make([]byte, 300<<10)
	if _, err := q.appendFrame(big); err != nil {
		t.Fatal(err)
	}
	_ = q.flush(nil, write)
	_, _ = q.appendFrame(frame)
	if c := cap(q.buf); c > maxHint {
		t.Fatalf("after a %d-byte batch the next starts in %d bytes, over the bound %d", len(big), c, maxHint)
	}
}

// TestFlushTakesStage: flush and tryFlush queue the input side's stage in
// their first critical section, as put did before them: after what waits,
// bounded by max (the queue then fails as a slow consumer and writes
// nothing), handed to a flusher already running when there is one, and
// dropped when the queue has failed. The stage's buffer never stays with
// the caller, and an idle queue holds none.
func TestFlushTakesStage(t *testing.T) {
	stage := func(s string) []byte { return append(framing.AcquireBuf(len(s)), s...) }
	type flusher func(q *outQueue, st []byte, write func([]byte) (int, error)) error
	flushers := map[string]flusher{
		"flush": func(q *outQueue, st []byte, write func([]byte) (int, error)) error {
			return q.flush(st, write)
		},
		"tryFlush": func(q *outQueue, st []byte, write func([]byte) (int, error)) error {
			_, err := q.tryFlush(st, write)
			return err
		},
	}
	for name, fl := range flushers {
		var written []byte
		write := func(b []byte) (int, error) { written = append(written, b...); return len(b), nil }

		// Alone: the stage is the batch.
		q := &outQueue{max: 1 << 20}
		q.hold()
		if err := fl(q, stage("a\nb\n"), write); err != nil || string(written) != "a\nb\n" {
			t.Fatalf("%s alone: %q, %v", name, written, err)
		}
		if q.held || q.buf != nil || q.spare != nil {
			t.Fatalf("%s alone: held %v, buffers %d %d after the flush", name, q.held, cap(q.buf), cap(q.spare))
		}

		// After a worker's frame queued during the read.
		written = nil
		q.hold()
		if wake, err := q.appendFrame([]byte("w")); wake || err != nil {
			t.Fatalf("%s: a frame queued while held: wake %v, %v", name, wake, err)
		}
		if err := fl(q, stage("a\n"), write); err != nil || string(written) != "w\na\n" {
			t.Fatalf("%s after a frame: %q, %v", name, written, err)
		}

		// A flusher already running takes the stage after what it writes.
		written = nil
		q.hold()
		_, _ = q.appendFrame([]byte("w"))
		inner := false
		outer := func(b []byte) (int, error) {
			if !inner {
				inner = true
				if err := fl(q, stage("a\n"), write); err != nil {
					t.Fatalf("%s inside a flush: %v", name, err)
				}
				if len(written) != 0 {
					t.Fatalf("%s inside a flush wrote %q itself", name, written)
				}
			}
			return write(b)
		}
		if err := q.flush(nil, outer); err != nil || string(written) != "w\na\n" {
			t.Fatalf("%s beside a running flusher: %q, %v", name, written, err)
		}

		// Past max with a frame waiting: the queue fails, nothing leaves.
		written = nil
		q = &outQueue{max: 8}
		q.hold()
		_, _ = q.appendFrame([]byte("wwww"))
		if err := fl(q, stage("aaaa\n"), write); err != ErrSlowConsumer || len(written) != 0 {
			t.Fatalf("%s past max: %q, %v; want nothing written and ErrSlowConsumer", name, written, err)
		}
		if q.buf != nil {
			t.Fatalf("%s past max: the failed queue holds %d bytes", name, len(q.buf))
		}
		// A failed queue drops the next stage.
		if err := fl(q, stage("a\n"), write); err != ErrSlowConsumer || len(written) != 0 || q.buf != nil {
			t.Fatalf("%s on a failed queue: %q, %v", name, written, err)
		}
	}
}
