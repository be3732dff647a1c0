package framing

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// multiLineInput is a small mixed input: CRLF, blank and whitespace lines,
// multi-byte UTF-8, and no final newline.
const multiLineInput = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n" +
	"\n  \t\r\n" +
	"{\"id\":2,\"text\":\"日本語 🎉\"}\n" +
	"\r\n" +
	"{\"id\":3}\r\n" +
	"{\"id\":4,\"last\":true}"

// TestEverySplitPoint feeds a multi-line input cut at every point (two
// chunks) and at every chunk size, to both framers, and wants the frames of
// the unsplit input.
func TestEverySplitPoint(t *testing.T) {
	in := []byte(multiLineInput)
	want := refFrames(in, DefaultMaxLine)
	if len(want) != 4 {
		t.Fatalf("reference gives %d frames, want 4", len(want))
	}
	for k := 1; k < len(in); k++ {
		r := NewReader(&chunkReader{data: in, sizes: []int{k, len(in)}}, ReaderConfig{})
		got, err := readAll(t, r)
		if err != io.EOF || !equalFrames(got, want) {
			t.Fatalf("split@%d Reader: %q, %v", k, got, err)
		}
		r.Release()
		if got := decodeChunks(t, NewDecoder(ReaderConfig{}), [][]byte{in[:k], in[k:]}); !equalFrames(got, want) {
			t.Fatalf("split@%d Decoder: %q", k, got)
		}
		// Chunks of k bytes all along.
		r = NewReader(&chunkReader{data: in, sizes: []int{k}}, ReaderConfig{})
		got, err = readAll(t, r)
		if err != io.EOF || !equalFrames(got, want) {
			t.Fatalf("chunks of %d Reader: %q, %v", k, got, err)
		}
		r.Release()
		if got := decodeChunks(t, NewDecoder(ReaderConfig{}), splitEvery(in, k)); !equalFrames(got, want) {
			t.Fatalf("chunks of %d Decoder: %q", k, got)
		}
	}
}

// TestBigMessageOneBytePerRead is RELIABILITY A3: a 3 MiB message delivered
// one byte per Read (and per Feed) comes out once, identical.
func TestBigMessageOneBytePerRead(t *testing.T) {
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[i%36]
	}
	copy(big, `{"payload":"`)
	copy(big[len(big)-2:], `"}`)
	in := append(append([]byte("{\"before\":1}\n"), big...), "\r\n{\"after\":2}\n"...)
	want := []string{`{"before":1}`, string(big), `{"after":2}`}

	r := NewReader(&chunkReader{data: in, sizes: []int{1}}, ReaderConfig{})
	got, err := readAll(t, r)
	if err != io.EOF || !equalFrames(got, want) {
		t.Fatalf("Reader: %q, %v", shortList(got), err)
	}
	r.Release()

	d := NewDecoder(ReaderConfig{})
	var out []string
	var one [1]byte
	for _, c := range in {
		one[0] = c
		d.Feed(one[:])
		for {
			f, err := d.Next()
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				break
			}
			out = append(out, string(f))
		}
	}
	if !equalFrames(out, want) {
		t.Fatalf("Decoder: %q", shortList(out))
	}
	d.Release()
}

// lazyReader yields n bytes of fill (generated, never held), then tail, then
// io.EOF. It samples HeapInuse at each of the first 256 reads (where the
// scratch buffer grows), then every 64.
type lazyReader struct {
	n        int64
	fill     byte
	pattern  []byte // 64 KiB of fill, copied out (cheap under -race)
	tail     []byte
	reads    int
	peakHeap uint64
}

func (l *lazyReader) Read(p []byte) (int, error) {
	l.reads++
	if l.reads <= 256 || l.reads%64 == 0 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		l.peakHeap = max(l.peakHeap, ms.HeapInuse)
	}
	if l.n > 0 {
		if len(l.pattern) == 0 {
			l.pattern = bytes.Repeat([]byte{l.fill}, 64<<10)
		}
		k := copy(p[:min(int64(len(p)), l.n)], l.pattern)
		l.n -= int64(k)
		return k, nil
	}
	if len(l.tail) > 0 {
		k := copy(p, l.tail)
		l.tail = l.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestEndlessLineBoundedMemory is RELIABILITY A1/A2: 1 GiB without a newline
// yields exactly one ErrLineTooLong, framing resumes after it, and the heap
// never grows past MaxLine plus one read buffer (plus slack for garbage).
func TestEndlessLineBoundedMemory(t *testing.T) {
	const total = 1 << 30
	slack := uint64(8 << 20)
	bound := func(base uint64) uint64 { return base + DefaultMaxLine + DefaultReadSize + slack }

	t.Run("Reader", func(t *testing.T) {
		src := &lazyReader{n: total, fill: 'a', tail: []byte("\n{\"ok\":1}\n")}
		base := heapInuse()
		r := NewReader(src, ReaderConfig{})
		defer r.Release()
		got, err := readAll(t, r)
		if err != io.EOF || !equalFrames(got, []string{tooLongMark, `{"ok":1}`}) {
			t.Fatalf("got %q, %v", got, err)
		}
		if r.TooLong() != 1 {
			t.Errorf("TooLong = %d, want 1", r.TooLong())
		}
		if src.peakHeap > bound(base) {
			t.Errorf("peak HeapInuse %d MiB over bound %d MiB (base %d MiB)", src.peakHeap>>20, bound(base)>>20, base>>20)
		}
		t.Logf("base %.1f MiB, peak %.1f MiB over %d reads", float64(base)/(1<<20), float64(src.peakHeap)/(1<<20), src.reads)
	})
	t.Run("Decoder", func(t *testing.T) {
		src := &lazyReader{n: total, fill: ' ', tail: []byte("\n{\"ok\":1}\n")}
		base := heapInuse()
		d := NewDecoder(ReaderConfig{})
		defer d.Release()
		chunk := make([]byte, 64<<10)
		var got []string
		for {
			n, err := src.Read(chunk)
			d.Feed(chunk[:n])
			for {
				f, err := d.Next()
				if err == ErrLineTooLong {
					got = append(got, tooLongMark)
					continue
				}
				if f == nil {
					break
				}
				got = append(got, string(f))
			}
			if err != nil {
				break
			}
		}
		if !equalFrames(got, []string{tooLongMark, `{"ok":1}`}) || d.TooLong() != 1 {
			t.Fatalf("got %q, TooLong %d", got, d.TooLong())
		}
		if src.peakHeap > bound(base) {
			t.Errorf("peak HeapInuse %d MiB over bound %d MiB (base %d MiB)", src.peakHeap>>20, bound(base)>>20, base>>20)
		}
	})
}

// TestReaderShrinksAfterBigMessage is RELIABILITY C16: after a 3 MiB message
// the Reader's buffers are back to the read buffer plus small scratch.
func TestReaderShrinksAfterBigMessage(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	var in []byte
	in = append(in, big...)
	in = append(in, '\n')
	for range 1000 {
		in = append(in, "{\"small\":true}\n"...)
	}
	r := NewReader(&chunkReader{data: in, sizes: []int{64 << 10}}, ReaderConfig{})
	defer r.Release()
	f, err := r.Next()
	if err != nil || len(f) != len(big) {
		t.Fatalf("Next = %d bytes, %v", len(f), err)
	}
	if r.bufCap() < len(big) {
		t.Fatalf("bufCap %d while holding the big frame", r.bufCap())
	}
	for range 3 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if c := r.bufCap(); c > 2*DefaultReadSize {
		t.Errorf("bufCap %d after the big message, want <= %d", c, 2*DefaultReadSize)
	}
	got, err := readAll(t, r)
	if err != io.EOF || len(got) != 997 {
		t.Fatalf("got %d frames, %v", len(got), err)
	}
	if c := r.bufCap(); c > 2*DefaultReadSize {
		t.Errorf("bufCap %d at EOF, want <= %d", c, 2*DefaultReadSize)
	}
}

// errReader returns data, then err (in the same call when together).
type errReader struct {
	data     []byte
	err      error
	together bool
	calls    int
}

func (e *errReader) Read(p []byte) (int, error) {
	e.calls++
	if len(e.data) > 0 {
		n := copy(p, e.data)
		e.data = e.data[n:]
		if e.together && len(e.data) == 0 {
			return n, e.err
		}
		return n, nil
	}
	return 0, e.err
}

func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom: connection reset")
	tests := []struct {
		name    string
		src     io.Reader
		want    []string
		wantErr string
	}{
		{name: "error after frames", src: &errReader{data: []byte("a\nb\n"), err: boom}, want: []string{"a", "b"}, wantErr: "boom"},
		{name: "error with data", src: &errReader{data: []byte("a\nb\n"), err: boom, together: true}, want: []string{"a", "b"}, wantErr: "connection reset"},
		{name: "partial line dropped before error", src: &errReader{data: []byte("a\npart"), err: boom}, want: []string{"a"}, wantErr: "boom"},
		{name: "unexpected eof is not eof", src: &errReader{data: []byte("a\npart"), err: io.ErrUnexpectedEOF}, want: []string{"a"}, wantErr: "unexpected EOF"},
		{name: "no progress", src: &errReader{}, wantErr: "multiple Read calls return no data or error"},
		{name: "bad count", src: badCountReader{}, wantErr: "framing: io.Reader returned an invalid count"},
	}
	for i, tc := range tests {
		r := NewReader(tc.src, ReaderConfig{})
		got, err := readAll(t, r)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("#%d %s: err = %v, want %q", i, tc.name, err, tc.wantErr)
		}
		if !equalFrames(got, tc.want) {
			t.Errorf("#%d %s: frames %q, want %q", i, tc.name, got, tc.want)
		}
		// Sticky.
		if _, err2 := r.Next(); err2 != err {
			t.Errorf("#%d %s: second Next err = %v, want %v", i, tc.name, err2, err)
		}
		r.Release()
	}
	if src := (&errReader{data: []byte("a\n"), err: boom}); true {
		r := NewReader(src, ReaderConfig{})
		readAll(t, r)
		calls := src.calls
		r.Next()
		if src.calls != calls {
			t.Errorf("Next after an error read again")
		}
	}
}

type badCountReader struct{}

func (badCountReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestReaderRelease(t *testing.T) {
	r := NewReader(strings.NewReader("a\nb\n"), ReaderConfig{})
	if f, err := r.Next(); err != nil || string(f) != "a" {
		t.Fatalf("Next = %q, %v", f, err)
	}
	r.Release()
	r.Release() // idempotent
	if f, err := r.Next(); f != nil || err != ErrReleased {
		t.Fatalf("Next after Release = %q, %v; want ErrReleased", f, err)
	}
	if r.bufCap() != 0 {
		t.Errorf("bufCap %d after Release", r.bufCap())
	}
}

func TestReaderOptionsDefaults(t *testing.T) {
	tests := []struct {
		opt          ReaderConfig
		wantMax      int
		wantReadSize int
	}{
		{ReaderConfig{}, DefaultMaxLine, DefaultReadSize},
		{ReaderConfig{MaxLine: 10, ReadSize: 100}, 10, 100},
		{ReaderConfig{MaxLine: -1, ReadSize: -5}, int(^uint(0) >> 1), DefaultReadSize},
	}
	for i, tc := range tests {
		m, rs := tc.opt.normalize()
		if m != tc.wantMax || rs != tc.wantReadSize {
			t.Errorf("#%d %+v: normalize = %d, %d; want %d, %d", i, tc.opt, m, rs, tc.wantMax, tc.wantReadSize)
		}
	}
	// The read buffer is a pool class, so small ReadSize values round up.
	r := NewReader(strings.NewReader("a\n"), ReaderConfig{ReadSize: 100})
	defer r.Release()
	r.Next()
	if c := cap(r.buf); c != class4K {
		t.Errorf("read buffer cap %d, want %d", c, class4K)
	}
}

// TestDefaultLimitBoundary is RELIABILITY A1 at the real default: a line of
// exactly 4 MiB passes, 4 MiB + 1 byte is rejected once and the next line is
// served, with input arriving in 64 KiB chunks.
func TestDefaultLimitBoundary(t *testing.T) {
	var in []byte
	in = append(in, bytes.Repeat([]byte("x"), DefaultMaxLine)...)
	in = append(in, '\n')
	in = append(in, bytes.Repeat([]byte("y"), DefaultMaxLine+1)...)
	in = append(in, "\r\n{\"next\":1}\n"...)
	want := []string{strings.Repeat("x", DefaultMaxLine), tooLongMark, `{"next":1}`}

	r := NewReader(&chunkReader{data: in, sizes: []int{64 << 10}}, ReaderConfig{})
	got, err := readAll(t, r)
	if err != io.EOF || !equalFrames(got, want) {
		t.Fatalf("Reader: %q, %v", shortList(got), err)
	}
	if r.TooLong() != 1 {
		t.Errorf("TooLong = %d, want 1", r.TooLong())
	}
	r.Release()

	d := NewDecoder(ReaderConfig{})
	if got := decodeChunks(t, d, splitEvery(in, 64<<10)); !equalFrames(got, want) {
		t.Fatalf("Decoder: %q", shortList(got))
	}
	if c := d.scratchCap(); c > DefaultReadSize {
		t.Errorf("scratch cap %d after End, want <= %d", c, DefaultReadSize)
	}
	d.Release()
}
