//go:build unix && !race

package stdio

import (
	"io"
	"testing"
)

// TestTryWriteAllocs: the reader's write to a non-blocking pipe allocates
// nothing (it allocated a closure and its two results on every batch).
func TestTryWriteAllocs(t *testing.T) {
	r, _, rw := rawPipe(t)
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
