//go:build unix

package stdio

import (
	"bytes"
	"os"
	"testing"
)

// rawPipe returns a new os.Pipe (non-blocking descriptors) and the
// rawWriter of its write end; both ends are closed when the test ends.
func rawPipe(tb testing.TB) (r, w *os.File, rw *rawWriter) {
	tb.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close(); w.Close() })
	if rw = nonBlockingOut(w); rw == nil {
		tb.Fatal("os.Pipe's write end not taken as non-blocking")
	}
	return r, w, rw
}

// TestTryWriteFull: a pipe that is full takes part of a write, then
// nothing, without an error and without blocking; what it took arrives
// in order.
func TestTryWriteFull(t *testing.T) {
	r, w, rw := rawPipe(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, more than a pipe holds
	n, err := rw.tryWrite(big)
	if err != nil || n <= 0 || n >= len(big) {
		t.Fatalf("tryWrite(1 MiB) = %d, %v; want part of it and no error", n, err)
	}
	if m, err := rw.tryWrite(big[n:]); m != 0 || err != nil {
		t.Fatalf("tryWrite on a full pipe = %d, %v; want 0, nil", m, err)
	}
	got := make([]byte, n)
	if _, err := r.Read(got[:0]); err != nil {
		t.Fatal(err)
	}
	for off := 0; off < n; {
		m, err := r.Read(got[off:])
		if err != nil {
			t.Fatal(err)
		}
		off += m
	}
	if !bytes.Equal(got, big[:n]) {
		t.Fatal("bytes read differ from those written")
	}
	w.Close()
	if _, err := rw.tryWrite([]byte("x")); err == nil {
		t.Fatal("tryWrite after Close: no error")
	}
}
