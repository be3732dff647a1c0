package streamhttp

import (
	"testing"
	"time"
)

// TestCoarseClockMono: the reading limitConn.Read takes for its read
// deadlines (mono) is the clock's reading as a monoNow value, the same
// one its t.Sub(monoEpoch) gives, both while the clock runs and once
// it is halted (then a fresh reading); and its Unix time, which the write
// deadline takes, is the reading's. Fails if either is kept apart from
// the reading it stands for.
func TestCoarseClockMono(t *testing.T) {
	var c coarseClock
	before := monoNow()
	if m := c.mono(); m < before || m > monoNow() {
		t.Fatalf("halted: mono %v not a fresh reading (between %v and now)", m, before)
	}
	c.start()
	defer c.halt()
	for range 3 {
		p := c.t.Load()
		if p == nil {
			t.Fatal("running clock holds no reading")
		}
		if got, want := c.mono(), c.t.Load().t.Sub(monoEpoch); got != want || p.mono != p.t.Sub(monoEpoch) {
			t.Fatalf("mono %v, want the reading's t.Sub(monoEpoch) = %v", got, want)
		}
		if p.unix != p.t.UnixNano() {
			t.Fatalf("unix %d, want t.UnixNano() = %d", p.unix, p.t.UnixNano())
		}
		c.t.Store(newCoarseReading(time.Now().Add(-time.Minute))) // as a tick stores it
	}
}
