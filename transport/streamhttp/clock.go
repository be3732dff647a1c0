package streamhttp

import (
	"sync"
	"sync/atomic"
	"time"
)

// coarseTick is how often a serving fasthttp front end reads the clock for
// its per-request deadlines (a variable for tests).
var coarseTick = 250 * time.Millisecond

// coarseClock holds a clock reading at most about coarseTick old while the
// fasthttp front end serves. The read and write deadlines every request
// moves are computed from it instead of a clock reading of their own (about
// 60 ns each on a VM's kvm-clock, a tenth of the transport's own work per
// request). A deadline computed from it is early by at most a tick, so it
// is used only for limits of at least coarseMinLimit; shorter ones read the
// clock. When the front end is not serving, mono reads the clock.
type coarseClock struct {
	t    atomic.Pointer[coarseReading]
	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
}

// coarseReading is one reading of a coarseClock: the time, and the same
// reading as a monoNow value and in Unix ns, so that the read deadlines
// (kept as monoNow values) and the write deadline (kept in Unix ns) take
// it without a conversion per request.
type coarseReading struct {
	t    time.Time
	mono time.Duration // t.Sub(monoEpoch)
	unix int64         // t.UnixNano(), for the write deadline (limitConn.refreshWriteDeadline)
}

func newCoarseReading(t time.Time) *coarseReading {
	return &coarseReading{t: t, mono: t.Sub(monoEpoch), unix: t.UnixNano()}
}

// coarseMinLimit is the shortest limit whose deadline may come from the
// coarse clock: early by at most 1/16 of it.
func coarseMinLimit() time.Duration { return 16 * coarseTick }

func (c *coarseClock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		return
	}
	c.t.Store(newCoarseReading(time.Now()))
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.run(coarseTick, c.stop, c.done)
}

func (c *coarseClock) run(tick time.Duration, stop, done chan struct{}) {
	defer close(done)
	tk := time.NewTicker(tick)
	defer tk.Stop()
	for {
		select {
		case <-stop:
			return
		case t := <-tk.C:
			c.t.Store(newCoarseReading(t))
		}
	}
}

// halt stops the ticker and waits for it; now then reads the clock.
func (c *coarseClock) halt() {
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.stop, c.done = nil, nil
	c.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	c.t.Store(nil)
}
