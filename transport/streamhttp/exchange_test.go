package streamhttp

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/replayconn"
)

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

// deadlineCounter counts the write deadlines set on a connection.
type deadlineCounter struct {
	*replayconn.Conn
	writeDeadlines atomic.Int32
}

func (c *deadlineCounter) SetWriteDeadline(time.Time) error {
	c.writeDeadlines.Add(1)
	return nil
}

// TestWriteDeadlineKept: the response's write deadline is set by the
// first request of a connection and then left alone while it is far off
// (limitConn.refreshWriteDeadline, from the coarse clock): 50 keep-alive
// requests set it once, not 50 times. Fails if send stops reaching the
// connection's limitConn, or the check takes a reading later than the
// clock's, and a deadline is set per request.
func TestWriteDeadlineKept(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	rc := &deadlineCounter{Conn: replayconn.New(wrkRequest, 50)}
	ln := &connsListener{closed: make(chan struct{}), cs: []net.Conn{rc}}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	<-rc.Finished
	close(ln.closed)
	_ = s.Shutdown(context.Background())
	<-done
	if rc.Done != rc.N || !bytes.HasSuffix(rc.First, []byte("\r\n\r\n"+wrkEchoReply)) {
		t.Fatalf("%d responses of %d, first %q", rc.Done, rc.N, rc.First)
	}
	if n := rc.writeDeadlines.Load(); n != 1 {
		t.Fatalf("%d write deadlines set for %d requests, want 1", n, rc.N)
	}
}

// TestDoneQuiet: Done on a quiet exchange (a request run where it was
// read) marks it ended and nothing else: no lock, no wake, no reference
// dropped (the engine took none). On an exchange handed off (handOff:
// not quiet, async) it marks it ended, wakes the waiter and drops the
// engine's reference. Fails if the quiet path forgets ended, drops a
// reference, or if the other path stops waking or releasing.
func TestDoneQuiet(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	x := s.acquireExchange()
	x.quiet = true // bound alone (bind)
	x.Done(nil)
	if !x.ended || x.refs.Load() != 1 || len(x.signal) != 0 || x.pooled {
		t.Fatalf("quiet Done: ended %v, refs %d, signals %d, pooled %v; want true, 1, 0, false",
			x.ended, x.refs.Load(), len(x.signal), x.pooled)
	}
	x.unref()

	x = s.acquireExchange()
	x.handOff() // a worker answers: the engine holds a reference of its own
	x.waiting.Store(true)
	x.Done(nil)
	x.waiting.Store(false)
	if !x.ended || x.refs.Load() != 1 || len(x.signal) != 1 || x.pooled {
		t.Fatalf("handed-off Done: ended %v, refs %d, signals %d, pooled %v; want true, 1, 1, false",
			x.ended, x.refs.Load(), len(x.signal), x.pooled)
	}
	x.unref()
	if !x.pooled || len(x.signal) != 0 {
		t.Fatalf("after the HTTP side's unref: pooled %v, signals %d; want true, 0", x.pooled, len(x.signal))
	}
}
