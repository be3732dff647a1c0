package engine

import (
	"context"
	"testing"
	"time"
)

// TestDoneLateIsClosed: a request that was cancelled, or timed out,
// before its handler first asked for Done is given a closed channel. The
// end stores no channel for a request that never asked (closeDoneLocked);
// Done then answers from the state.
func TestDoneLateIsClosed(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	got := make(chan bool, 2)
	closed := func(c *Call) bool {
		select {
		case <-c.Done():
			return true
		default:
			return false
		}
	}
	_ = s.AddTool(Tool{Name: "cancelled", Handler: func(c *Call) error {
		c.cancelGen(c.gen, context.Canceled)
		got <- closed(c)
		return nil
	}})
	_ = s.AddTool(Tool{Name: "expired", Timeout: 10 * time.Millisecond, Handler: func(c *Call) error {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			c.mu.Lock()
			running := c.state == stateRunning
			c.mu.Unlock()
			if !running {
				break
			}
		}
		got <- closed(c)
		return nil
	}})
	for _, name := range []string{"cancelled", "expired"} {
		runToolCall(t, s, name, "")
		if !<-got {
			t.Errorf("%s: Done is not closed once the request has ended", name)
		}
	}
}
