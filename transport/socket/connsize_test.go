package socket

import (
	"testing"
	"unsafe"
)

// TestConnSize: every open connection carries one conn beside gnet's own
// state and the linestream.Conn (whose idle footprint linestream's
// TestIdleConnBytes bounds). The write-progress bookkeeping lives in a
// stallWatch allocated only for a connection whose output had to wait, and
// the client IP is derived from the address when needed, which brought conn
// from 176 to 80 bytes (size classes) — the largest share of issue 21
// item 6's 1.0 KiB per idle TCP connection that is ours.
func TestConnSize(t *testing.T) {
	const max = 80
	if n := unsafe.Sizeof(conn{}); n > max {
		t.Fatalf("conn is %d bytes, want ≤ %d: keep rarely used state out of it", n, max)
	}
}
