package streamhttp

import "testing"

// TestUnrefDrainsSignal: an exchange goes back to the pool with no wake
// left in its signal, whether or not one was sent, so that the next
// request's waitFirst or pump does not take a stale wake for news. unref
// looks at the channel only when x is no longer quiet, and then at its
// length before it receives (a request run where it was read sends
// none); this fails if either look skips a wake that is there.
func TestUnrefDrainsSignal(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	for _, woken := range []bool{false, true} {
		x := s.acquireExchange()
		x.quiet = true // bound alone (bind), as dispatch leaves a request run where it was read
		if woken {
			// Waiting starts only once x is no longer quiet (handOff
			// before waitFirst, dispatch before the pump).
			x.quiet = false
			x.waiting.Store(true)
			x.wake()
			x.waiting.Store(false)
			if len(x.signal) != 1 {
				t.Fatalf("wake sent %d signals, want 1", len(x.signal))
			}
		}
		x.unref()
		if !x.pooled {
			t.Fatalf("woken=%v: exchange not back in the pool", woken)
		}
		if n := len(x.signal); n != 0 {
			t.Fatalf("woken=%v: %d wakes left in the pooled exchange's signal", woken, n)
		}
	}
}
