package streamhttp

import (
	"testing"
	"time"
)

// TestCoarseClockMono: a reading holds the clock's time as a monoNow
// value (mono, which limitConn.Read takes for its read deadlines), the
// same one its t.Sub(monoEpoch) gives, and its Unix time (unix, which the
// write deadline takes); a halted clock holds none (Read then takes a
// fresh monoNow). Fails if either is kept apart from the reading it
// stands for.
func TestCoarseClockMono(t *testing.T) {
	var c coarseClock
	if c.t.Load() != nil {
		t.Fatal("halted clock holds a reading")
	}
	c.start()
	defer c.halt()
	for range 3 {
		p := c.t.Load()
		if p == nil {
			t.Fatal("running clock holds no reading")
		}
		if p.mono != p.t.Sub(monoEpoch) {
			t.Fatalf("mono %v, want the reading's t.Sub(monoEpoch) = %v", p.mono, p.t.Sub(monoEpoch))
		}
		if p.unix != p.t.UnixNano() {
			t.Fatalf("unix %d, want t.UnixNano() = %d", p.unix, p.t.UnixNano())
		}
		c.t.Store(newCoarseReading(time.Now().Add(-time.Minute))) // as a tick stores it
	}
	c.halt()
	if c.t.Load() != nil {
		t.Fatal("halted clock still holds a reading")
	}
}
