//go:build !race

package linestream

import (
	"context"
	"testing"
)

// TestEchoAllocsPerRead: a read of one inline echo (the standard fixture)
// allocates nothing in steady state: the batch, its spare Call and the
// peek's memo come back with the batch from its pool, not new per read.
func TestEchoAllocsPerRead(t *testing.T) {
	s := echoServer(t, true)
	d, stop := newBenchConn(s)
	chunk := roundTrips(d, 40, 1, echoTail, nil)
	const rounds = 64
	allocs := testing.AllocsPerRun(20, func() {
		chunk = roundTrips(d, rounds, 1, echoTail, chunk)
	}) / rounds
	stop()
	_ = s.Shutdown(context.Background())
	t.Logf("%.3f allocs per read", allocs)
	if allocs != 0 {
		t.Errorf("%.3f allocs per read of one message, want 0", allocs)
	}
}
