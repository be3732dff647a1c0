package stdio

import (
	"testing"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestBurstEveryLineAnswered (RELIABILITY A19) on stdio: a burst of 1M
// pings (100k under -short) written to stdin as fast as the pipe takes
// them while stdout is read: every request is answered, each id exactly
// once, and the live heap grows by less than fixture.BurstBound (32 MiB).
func TestBurstEveryLineAnswered(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	s := startSession(t, Config{})
	grew := fixture.PingBurst(t, s.in, s.out, n)
	t.Logf("%d pings answered; live heap grew by at most %.1f MiB", n, float64(grew)/(1<<20))
	if grew > fixture.BurstBound {
		t.Errorf("live heap grew by %.1f MiB during the burst: over the %d MiB bound", float64(grew)/(1<<20), fixture.BurstBound>>20)
	}
}
