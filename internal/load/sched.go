package load

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// sched hands out request start times to the sending goroutines. All times
// are nanoseconds since base (monotonic clock).
//
// Closed loop (rate 0): a request may start whenever a sender is free.
// Open loop: request i is due at t0 + i/rate; whichever sender is free takes
// the next ticket (one shared counter), sleeps until it is due and sends.
// When every sender is busy, due tickets wait, and their latency, measured
// from the due time, includes that wait (coordinated-omission correction).
type sched struct {
	base   time.Time
	rate   float64
	t0     int64 // start of the warm-up
	mStart int64 // start of the measurement
	end    int64 // end of the measurement (0: none)
	limit  int64 // measured requests (0: none)

	tickets  atomic.Int64
	measured atomic.Int64 // measured starts handed out
	sentMeas atomic.Int64 // measured starts actually sent (open loop)
	stopAt   atomic.Int64
	halted   atomic.Bool // stop was called (cheaper to poll than done)
	limitHit atomic.Bool // the request count ended the run

	once sync.Once
	done chan struct{}
}

func newSched(base time.Time, rate float64, t0, warmup, dur time.Duration, limit int64) *sched {
	s := &sched{base: base, rate: rate, t0: int64(t0), limit: limit, done: make(chan struct{})}
	s.mStart = s.t0 + int64(warmup)
	if dur > 0 {
		s.end = s.mStart + int64(dur)
	}
	return s
}

func (s *sched) now() int64 { return int64(time.Since(s.base)) }

// stop interrupts the run: no more starts are handed out, and senders
// waiting for a due time return at once.
func (s *sched) stop() {
	s.once.Do(func() {
		s.stopAt.Store(s.now())
		s.halted.Store(true)
		close(s.done)
	})
}

func (s *sched) stopped() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// next blocks until the next request may start and returns its start time
// and whether it is measured; ok is false once the run is over for this
// sender. t is the caller's timer for the open-loop wait. Reaching the end
// or the count ends each sender on its own: a sender that drew a start past
// the end must not cut short the others, which may hold starts due before it.
func (s *sched) next(t *time.Timer) (start int64, measured, ok bool) {
	if s.stopped() {
		return 0, false, false
	}
	if s.rate <= 0 {
		now := s.now()
		measured, ok = s.nextAt(now)
		return now, measured, ok
	}
	i := s.tickets.Add(1) - 1
	start = s.t0 + int64(float64(i)*1e9/s.rate)
	if s.end > 0 && start >= s.end {
		return 0, false, false
	}
	measured = start >= s.mStart
	if measured && s.limit > 0 && s.measured.Add(1) > s.limit {
		s.limitHit.Store(true)
		return 0, false, false
	}
	if d := start - s.now(); d > 0 {
		t.Reset(time.Duration(d))
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
			return 0, false, false
		}
	}
	if s.late() {
		// Due inside the window, but every sender stayed busy until well
		// after it closed.
		return 0, false, false
	}
	if measured {
		s.sentMeas.Add(1)
	}
	return start, measured, true
}

// nextAt is next for a closed loop, for a request starting at now (a batch
// of requests sent together shares one clock reading).
func (s *sched) nextAt(now int64) (measured, ok bool) {
	if s.halted.Load() || s.end > 0 && now >= s.end {
		return false, false
	}
	measured = now >= s.mStart
	if measured && s.limit > 0 && s.measured.Add(1) > s.limit {
		s.limitHit.Store(true)
		return false, false
	}
	return measured, true
}

// lateGrace is how long after the end of the window a request that fell due
// inside it may still be sent (timer and scheduling jitter), before it
// counts as unsent.
const lateGrace = int64(50 * time.Millisecond)

// late reports whether the window has closed for requests due inside it.
func (s *sched) late() bool { return s.end > 0 && s.now() >= s.end+lateGrace }

// unsend takes back a measured start that was handed out but not sent.
func (s *sched) unsend(measured bool) {
	if measured {
		s.sentMeas.Add(-1)
	}
}

// unsent is how many open-loop requests fell due inside the measurement
// window but were never sent because no sender was free before it closed.
func (s *sched) unsent() int64 {
	if s.rate <= 0 || s.end == 0 {
		return 0
	}
	first := math.Ceil(float64(s.mStart-s.t0) * s.rate / 1e9)
	last := math.Ceil(float64(s.end-s.t0) * s.rate / 1e9) // exclusive
	due := int64(last - first)
	if s.limit > 0 && due > s.limit {
		due = s.limit
	}
	return max(0, due-s.sentMeas.Load())
}
