package engine

import (
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// progress is a request's progress limiter (PROG-03, PROG-07, PROG-08, C9,
// C10). Values must strictly increase; a burst within ProgressInterval is
// coalesced so that the latest value wins; what is pending when the result
// is ready is flushed before it; nothing is sent after it. Fields are
// guarded by Call.mu.
type progress struct {
	// The flags complete and release test on every request, first and
	// together (one cache line; see Call.prog).
	sent    bool
	pending bool
	armed   bool

	last   float64 // highest value accepted
	lastAt time.Time

	pv, pt float64
	pmsg   string

	timer *time.Timer
	gen   uint64 // the Call's generation timer was made for
	buf   []byte
}

// reset clears the limiter for the Call's next request; most requests
// never touched it (no progress sent, nothing pending or armed), and the
// check is inlined where the Call is released. sent alone tells: only
// clear resets it, and Progress sends before it keeps a value pending
// (pending, pmsg) or arms the timer (TestProgressClearedOnReuse).
func (p *progress) reset() {
	if p.sent {
		p.clear()
	}
}

func (p *progress) clear() {
	p.stopLocked()
	p.sent, p.pending = false, false
	p.last, p.pv, p.pt, p.pmsg = 0, 0, 0, ""
	p.lastAt = time.Time{}
	if cap(p.buf) > 4<<10 {
		p.buf = nil
	}
}

func (p *progress) stopLocked() {
	if p.armed {
		p.stopTimer()
	}
	p.pending = false
}

// stopTimer is stopLocked's work, out of line so that the check inlines.
//
//go:noinline
func (p *progress) stopTimer() {
	p.timer.Stop()
	p.armed = false
}

// Progress reports progress of the request (PROG-02): value, total (<= 0
// means unknown) and an optional human-readable message. It does nothing
// when the client sent no progressToken, when value does not exceed the
// last value reported, or once the request has completed or been cancelled.
// It never blocks on the peer for longer than one frame write.
func (c *Call) Progress(value, total float64, message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := &c.prog
	if c.env.ProgressToken == nil || c.state != stateRunning || (p.sent && value <= p.last) || (p.pending && value <= p.pv) {
		c.srv.stats.ProgressDropped.Add(1)
		return
	}
	iv := c.srv.opt.ProgressInterval
	now := time.Now()
	if !p.sent || iv == 0 || now.Sub(p.lastAt) >= iv {
		if p.pending {
			c.srv.stats.ProgressCoalesce.Add(1)
			p.pending = false
		}
		c.sendProgressLocked(value, total, message, now)
		return
	}
	if p.pending {
		c.srv.stats.ProgressCoalesce.Add(1)
	}
	p.pending, p.pv, p.pt, p.pmsg = true, value, total, message
	if !p.armed {
		d := iv - now.Sub(p.lastAt)
		if gen := c.gen; p.timer == nil || p.gen != gen {
			// A fresh timer per reuse generation (as the timeout's): one
			// that fired for the Call's previous request and runs late
			// finds another generation and touches nothing.
			p.timer = time.AfterFunc(d, func() { c.progressTimer(gen) })
			p.gen = gen
		} else {
			p.timer.Reset(d)
		}
		p.armed = true
	}
}

// progressTimer sends the coalesced value when the interval has passed.
func (c *Call) progressTimer(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return // the request it was armed for has completed
	}
	c.prog.armed = false
	if c.state == stateRunning && c.prog.pending {
		c.prog.flushLocked(c)
	}
}

// flushLocked sends a pending value now (before the final response).
func (p *progress) flushLocked(c *Call) {
	if p.pending { // inlined: most requests have nothing pending
		p.flush(c)
	}
}

func (p *progress) flush(c *Call) {
	p.pending = false
	c.sendProgressLocked(p.pv, p.pt, p.pmsg, time.Now())
}

func (c *Call) sendProgressLocked(value, total float64, message string, now time.Time) {
	p := &c.prog
	p.sent, p.last, p.lastAt = true, value, now
	c.extendTimeoutLocked(now) // TMO-03
	p.buf = codec.AppendProgress(p.buf[:0], c.env.ProgressToken, value, total, total > 0, message)
	c.srv.stats.ProgressSent.Add(1)
	_ = c.rep.Notify(c.req(), p.buf)
}

// notifyLocked-free helper for notifications other than progress: it writes
// frame only while the call is running, holding Call.mu so that the final
// response or a cancellation cannot overtake it.
func (c *Call) notify(frame []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateRunning {
		return errNotRunning
	}
	return c.rep.Notify(c.req(), frame)
}

var errNotRunning = codec.NewError(codec.CodeInternalError, "request is no longer running")
