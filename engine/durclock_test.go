package engine

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestDurNowFollowsTheMonotonicClock: the histograms' clock (durNow,
// runtime.nanotime read directly) moves as time.Since does over the same
// interval: at least the time slept, at most what time.Since saw around
// it, and it never reads 0 (unset). Fails if durNow reads another unit or
// another clock than the one time.Since reads.
func TestDurNowFollowsTheMonotonicClock(t *testing.T) {
	start := time.Now()
	a := durNow()
	time.Sleep(2 * time.Millisecond)
	b := durNow()
	around := time.Since(start)
	if a < 1 || b < 1 {
		t.Fatalf("durNow read %d, %d: want at least 1", a, b)
	}
	if d := time.Duration(b - a); d < 2*time.Millisecond || d > around {
		t.Fatalf("durNow moved %v over a 2ms sleep that time.Since saw as %v", d, around)
	}
	if s := durStartOf(t); s < b {
		t.Fatalf("durStart %d after durNow %d: want a later reading", s, b)
	}
}

func durStartOf(t *testing.T) int64 {
	s := New(Config{})
	t.Cleanup(func() { _ = s.Shutdown(t.Context()) })
	return s.durStart()
}

// TestDurNowRealInBubble: inside a testing/synctest bubble the histograms
// still record real durations (durNow does not read the bubble's fake
// clock, which time.Since does): an hour of fake sleep moves durNow by far
// less than an hour. Fails if durNow goes back to time.Since.
func TestDurNowRealInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := durNow()
		time.Sleep(time.Hour)
		if d := time.Duration(durNow() - a); d >= time.Hour {
			t.Fatalf("durNow moved %v over an hour of fake time: want real time", d)
		}
	})
}
