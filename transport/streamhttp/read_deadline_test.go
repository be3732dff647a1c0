package streamhttp

import (
	"net"
	"testing"
	"time"
)

// deadlineConn is a net.Conn whose reads return n bytes at once and which
// records the read deadlines set on it.
type deadlineConn struct {
	net.Conn // nil: only Read and SetReadDeadline are called
	n        int
	set      []time.Time
}

func (c *deadlineConn) Read(p []byte) (int, error) { return c.n, nil }
func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

// TestReadDeadlineStates: limitConn.Read sets the read deadline each
// state calls for, from the coarse clock's reading, and leaves one that
// is close enough: ReadTimeout on a new connection, then ReadTimeout from
// the request's start or ReadIdleTimeout from now, whichever is first,
// then IdleTimeout between requests, kept while it is at most a sixteenth
// of the limit early. Read tells the usual keep-alive wait without
// applyReadDeadline (idleKept); this fails if that shortcut is taken
// inside a request or on a connection not yet served, or if it tests
// against another limit than IdleTimeout.
func TestReadDeadlineStates(t *testing.T) {
	const readTO, idleTO, gapTO = 30 * time.Second, 64 * time.Second, 10 * time.Second
	var clk coarseClock // the test's own clock, moved by hand (never started)
	base := time.Now()
	at := func(d time.Duration) time.Duration {
		clk.t.Store(newCoarseReading(base.Add(d)))
		return clk.t.Load().mono
	}
	fc := &deadlineConn{}
	c := &limitConn{Conn: fc, clk: &clk, coarse: true, stats: &Stats{}, readTO: readTO, idleTO: idleTO, gapTO: gapTO}
	buf := make([]byte, 8)
	step := 0
	read := func(now time.Duration, n int, want time.Duration) {
		t.Helper()
		step++
		fc.n = n
		before := len(fc.set)
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		switch {
		case want == 0 && len(fc.set) != before:
			t.Fatalf("step %d: deadline set to %v, want the one on the socket kept", step, fc.set[len(fc.set)-1].Sub(monoEpoch.Add(now)))
		case want != 0 && len(fc.set) != before+1:
			t.Fatalf("step %d: no deadline set, want now+%v", step, want-now)
		case want != 0 && !fc.set[len(fc.set)-1].Equal(monoEpoch.Add(want)):
			t.Fatalf("step %d: deadline now+%v, want now+%v", step, fc.set[len(fc.set)-1].Sub(monoEpoch.Add(now)), want-now)
		}
	}

	// A new connection whose socket deadline some other hand (the
	// disconnect watcher's SetReadDeadline) left one IdleTimeout ahead:
	// not served yet, it waits ReadTimeout, so the later deadline goes.
	now := at(0)
	_ = c.SetReadDeadline(monoEpoch.Add(now + idleTO))
	read(now, 0, now+readTO)
	// The request's first bytes, then its second read: the gap limit
	// comes first.
	read(now, 5, 0)
	now = at(time.Second)
	read(now, 5, now+gapTO)
	c.requestRead()
	// Between requests: IdleTimeout from now.
	read(now, 0, now+idleTO)
	// Kept while at most IdleTimeout/16 (4 s) early.
	now = at(4 * time.Second)
	read(now, 0, 0)
	// A request begins on the served connection; its second read, with
	// the idle deadline just set, must still move to the request's limits.
	read(now, 5, 0)
	read(now, 5, now+gapTO)
	c.requestRead()
	read(now, 0, now+idleTO)
	// Past IdleTimeout/16: moved.
	now = at(4*time.Second + idleTO/16 + time.Millisecond)
	read(now, 0, now+idleTO)
	now = at(5*time.Second + idleTO/16)
	read(now, 0, 0)
	// A deadline later than IdleTimeout from now (another hand's) is
	// never kept: Read brings it back.
	_ = c.SetReadDeadline(monoEpoch.Add(now + idleTO + 6*time.Second))
	read(now, 0, now+idleTO)
}
