package socket

import (
	"testing"

	fx "github.com/mcpwire/mcpwire/internal/fixture"
)

// TestBurstEveryLineAnswered (RELIABILITY A19): one TCP connection writes
// a burst of 1M pings (100k under -short) as fast as TCP takes them while
// reading the answers: every request is answered, each id exactly once,
// and the process's live heap grows by less than fx.BurstBound (32 MiB),
// well under what keeping the burst's requests or answers would take.
func TestBurstEveryLineAnswered(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	f := start(t, "tcp", Config{}, nil)
	c := f.dial()
	grew := fx.PingBurst(t, c.c, c.c, n)
	t.Logf("%d pings answered; live heap grew by at most %.1f MiB", n, float64(grew)/(1<<20))
	if grew > fx.BurstBound {
		t.Errorf("live heap grew by %.1f MiB during the burst: over the %d MiB bound", float64(grew)/(1<<20), fx.BurstBound>>20)
	}
}
