//go:build !race

package linestream

import (
	"context"
	"testing"
)

// TestEchoAllocs pins the steady-state cost of an echo round trip through
// the line core, with the standard fixture (progressToken included): at
// most 1 allocation per message, inline or on a worker.
func TestEchoAllocs(t *testing.T) {
	for _, inline := range []bool{true, false} {
		s := echoServer(t, inline)
		d, stop := newBenchConn(s)
		chunk := roundTrips(d, 40, 64, echoTail, nil)
		const rounds = 10
		allocs := testing.AllocsPerRun(20, func() {
			chunk = roundTrips(d, rounds, 64, echoTail, chunk)
		}) / (rounds * 64)
		stop()
		_ = s.Shutdown(context.Background())
		if allocs > 1 {
			t.Errorf("inline=%v: %.3f allocs per message, want <= 1", inline, allocs)
		}
		t.Logf("inline=%v: %.3f allocs per message", inline, allocs)
	}
}
