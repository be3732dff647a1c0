package engine

import (
	"context"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// Request timeouts (TMO-01..03, issue 5). A tool may set Tool.Timeout: when
// it passes without the handler finishing, the handler's context is
// cancelled (Err is context.DeadlineExceeded) and the client gets a -32603
// "Request timed out" error at once, even if the handler ignores its
// context; whatever the handler produces afterwards is dropped. Each
// progress notification restarts the timeout (TMO-03), but never past
// Tool.MaxTimeout from the start (default 4 × Timeout). Config.Timeout
// applies to tools that set none. Listen streams have no timeout (SUB-13).

// ErrTimedOut is the answer to a request whose timeout passed.
var ErrTimedOut = codec.NewError(codec.CodeInternalError, "Request timed out")

// deadline is a call's timeout state, guarded by Call.mu.
type deadline struct {
	// The flags complete and release read on every request, first (on
	// the line of Call.mu's group; see Call.dl).
	armed     bool
	timedOut  bool
	idle, max time.Duration
	start     time.Time
	timer     *time.Timer
	gen       uint64
}

func (c *Call) timeouts() (idle, max time.Duration) {
	if c.method == listenMethod {
		return 0, 0
	}
	idle = c.srv.opt.Timeout
	if c.tool != nil && c.tool.Timeout > 0 {
		idle, max = c.tool.Timeout, c.tool.MaxTimeout
	}
	return idle, max
}

// hasTimeout reports whether the request will be answered by a timeout
// even if its handler never returns.
func (c *Call) hasTimeout() bool {
	idle, _ := c.timeouts()
	return idle > 0
}

// armTimeout arms the request's timeout, if it has one. The check inlines
// (most requests have none); timeouts decides.
func (c *Call) armTimeout() {
	if c.srv.opt.Timeout > 0 || c.tool != nil && c.tool.Timeout > 0 {
		c.armTimeoutSlow()
	}
}

// armTimeoutSlow is armTimeout's work, out of line.
func (c *Call) armTimeoutSlow() {
	idle, max := c.timeouts()
	if idle <= 0 {
		return
	}
	if max <= 0 {
		max = 4 * idle
	}
	c.mu.Lock()
	d := &c.dl
	d.idle, d.max, d.start, d.timedOut = idle, max, time.Now(), false
	gen := c.gen
	if d.timer == nil || d.gen != gen {
		// A fresh timer per reuse generation: a stale one from the Call's
		// previous life can then never fire into this request.
		d.timer = time.AfterFunc(idle, func() { c.expire(gen) })
		d.gen = gen
	} else {
		d.timer.Reset(idle)
	}
	d.armed = true
	c.mu.Unlock()
}

// extendTimeoutLocked restarts the idle timeout after progress, bounded by
// the maximum. Called with c.mu held.
func (c *Call) extendTimeoutLocked(now time.Time) {
	d := &c.dl
	if !d.armed {
		return
	}
	left := d.max - now.Sub(d.start)
	if left <= 0 {
		return
	}
	d.timer.Reset(min(d.idle, left))
}

func (c *Call) stopTimeoutLocked() {
	if c.dl.armed { // inlined: most requests have no timeout
		c.stopTimeout()
	}
}

// stopTimeout is stopTimeoutLocked's work, out of line so that the check
// inlines.
//
//go:noinline
func (c *Call) stopTimeout() {
	c.dl.timer.Stop()
	c.dl.armed = false
}

// expire answers a request whose timeout passed.
func (c *Call) expire(gen uint64) {
	c.mu.Lock()
	if c.gen != gen || c.state != stateRunning || !c.dl.armed {
		c.mu.Unlock()
		return
	}
	c.dl.armed = false
	c.dl.timedOut = true
	c.state = stateFinished // nothing else is sent for it
	c.err = context.DeadlineExceeded
	c.closeDoneLocked()
	afters := c.takeAftersLocked()
	c.prog.stopLocked()
	var id []byte
	if c.env.IDKind == codec.IDString || c.env.IDKind == codec.IDNumber {
		id = c.env.ID
	}
	frame := codec.AppendErrorResponse(nil, id, ErrTimedOut)
	c.srv.stats.TimedOut.Add(1)
	// Replied under c.mu (as progress is): the call cannot end, and be
	// recycled, while its Replier is being told.
	_ = c.rep.Reply(c.req(), frame, ErrTimedOut.HTTPStatus())
	c.mu.Unlock()
	c.runAfters(afters)
}
