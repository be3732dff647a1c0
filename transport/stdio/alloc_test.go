//go:build unix && !race

package stdio

import (
	"io"
	"os"
	"testing"
)

// TestTryWriteAllocs: the reader's write to a non-blocking pipe allocates
// nothing (it allocated a closure and its two results on every batch).
func TestTryWriteAllocs(t *testing.T) {
	r, w, err := os.Pipe() // non-blocking descriptors
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rw := nonBlockingOut(w)
	if rw == nil {
		t.Fatal("os.Pipe's write end not taken as non-blocking")
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	buf := make([]byte, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := rw.tryWrite(msg); n != len(msg) || err != nil {
			t.Fatalf("tryWrite = %d, %v", n, err)
		}
		if _, err := io.ReadFull(r, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per tryWrite, want 0", allocs)
	}
}
