package legacy

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestForgetBeforeStart: a session ended between addCall and start (a
// DELETE racing a POST) cancels the call without a panic, and the call is
// then not run.
func TestForgetBeforeStart(t *testing.T) {
	eng := engine.New(engine.Config{Name: "t", Version: "1"})
	s := New(eng, Config{})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
	}()
	ss := &session{s: s, id: "sid"}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	c := newCall()
	if !ss.addCall("1", c) {
		t.Fatal("addCall refused")
	}
	if !s.forget(ss) {
		t.Fatal("forget: session not held")
	}
	c.mu.Lock()
	why := c.cancelled
	c.mu.Unlock()
	if why != errSessionEnded {
		t.Fatalf("cancelled = %v, want %v", why, errSessionEnded)
	}
	// Starting it now answers it as cancelled instead of running it.
	msg := []byte(`{"jsonrpc":"2.0","id":"1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + s.modern + `","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if e := s.start(context.Background(), msg, c, nil, "", nil, nil); e != nil {
		t.Fatalf("start: %v", e)
	}
	_, reply, done := c.take()
	if !done || reply == nil || !bytes.Contains(reply.frame, []byte("Request cancelled")) {
		t.Fatalf("after start: done %v, reply %+v; want the request answered as cancelled", done, reply)
	}
}

// TestCallWakesWaiter: Notify, Reply and Done skip the channel until
// someone has looked at the call (take or peek), so a call answered
// before anyone looks costs no send; a waiter that looked and found
// nothing must still be woken by each of them.
func TestCallWakesWaiter(t *testing.T) {
	within := func(name string, f func()) {
		t.Helper()
		ok := make(chan struct{})
		go func() { f(); close(ok) }()
		select {
		case <-ok:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the waiter was never woken", name)
		}
	}
	// Each producer gets its call as an argument and is joined before the
	// call is released: a call goes back to the pool only once nobody
	// touches it.
	produce := func(c *call, f func(*call)) (joined chan struct{}) {
		joined = make(chan struct{})
		go func() { defer close(joined); f(c) }()
		return joined
	}
	// pump's way: take, then wait for the reply and then for Done.
	c := acquireCall()
	joined := produce(c, func(c *call) {
		time.Sleep(20 * time.Millisecond)
		_ = c.Notify(nil, []byte(`{"n":1}`))
		time.Sleep(20 * time.Millisecond)
		_ = c.Reply(nil, []byte(`{"r":1}`), 200)
		time.Sleep(20 * time.Millisecond)
		c.Done(nil)
	})
	within("take", func() {
		var notes int
		for {
			n, reply, done := c.take()
			notes += len(n)
			if reply != nil {
				for !done {
					<-c.wake
					_, _, done = c.take()
				}
				break
			}
			<-c.wake
		}
		if notes != 1 {
			t.Errorf("%d notes", notes)
		}
	})
	within("join take's producer", func() { <-joined })
	c.release()
	// serveFast's way: peek until something is there.
	c = acquireCall()
	joined = produce(c, func(c *call) {
		time.Sleep(20 * time.Millisecond)
		_ = c.Reply(nil, []byte(`{"r":1}`), 200)
		c.Done(nil)
	})
	within("peek", func() {
		for notes, reply, done := c.peek(); notes == 0 && reply == nil && !done; notes, reply, done = c.peek() {
			<-c.wake
		}
	})
	within("join peek's producer", func() { <-joined })
	c.release()
	// Answered before anyone looked: nothing was sent, nothing is left
	// for the next use of the call.
	c = acquireCall()
	_ = c.Reply(nil, []byte(`{"r":1}`), 200)
	c.Done(nil)
	if len(c.wake) != 0 {
		t.Errorf("%d signals for a call nobody looked at", len(c.wake))
	}
	c.release()
}
