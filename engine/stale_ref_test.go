package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// refInDone takes Request.Ref in Done, as a transport keeping a reference
// for a late cancel might. A request on its own moves its generation on
// in complete, before its Reply and Done: Ref taken there must still name
// the request it was taken on, not the Call's next one.
type refInDone struct {
	ref RequestRef
	c   *Call
}

func (r *refInDone) Notify(*Request, []byte) error     { return nil }
func (r *refInDone) Reply(*Request, []byte, int) error { return nil }
func (r *refInDone) Done(q *Request)                   { r.ref, r.c = q.Ref(), q.c }

// TestRefInDoneNamesItsOwnRequest: cancelling such a reference never
// cancels the request the Call serves next.
func TestRefInDoneNamesItsOwnRequest(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "http")
	for attempt := 0; attempt < 50; attempt++ {
		first := &refInDone{}
		runChecked(t, sc, sc.Prepare(), batchMsg("1", "fast"), first)
		r2 := prepareOn(sc, first.c)
		if r2 == nil {
			continue
		}
		second := &keepReply{}
		r2 = beginOn(t, sc, r2, batchMsg("2", "fast"), second)
		if first.ref.Cancel(errShutdown) {
			t.Errorf("a reference taken in request 1's Done cancelled request 2")
		}
		if e := r2.Check(); e != nil {
			t.Fatal(e)
		}
		r2.Run()
		if got := second.all(); len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
			t.Fatalf("request 2: %q", got)
		}
		return
	}
	t.Fatal("the pool never returned the Call in 50 attempts")
}

// TestStaleInterruptAgainstRelease: a stale hub subscription (a publisher's or interrupt's snapshot)
// reaches a Call after its listen stream ended and the Call went on to a
// request on its own; interrupt reads c.detached under c.mu before it
// compares c.sub, while release (ended path) writes c.detached without it.
func TestStaleInterruptAgainstRelease(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	sc := NewScope(s, "http")
	rep := &countReply{}
	lmsg := []byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + metaJSON + `}}`)
	fmsg := batchMsg("2", "fast")
	stale := make(chan *subscription, 1)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case sub := <-stale:
				for i := 0; i < 50; i++ {
					sub.c.interrupt(sub)
				}
			case <-done:
				return
			}
		}
	}()
	for i := 0; i < 3000; i++ {
		var env codec.Envelope
		if err := codec.Peek(lmsg, &env); err != nil {
			t.Fatal(err)
		}
		r := sc.Begin(context.Background(), lmsg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		ref := r.Ref()
		c := r.c
		r.Start()
		c.mu.Lock()
		sub := c.sub
		c.mu.Unlock()
		ref.Cancel(errShutdown)
		if sub != nil {
			select {
			case stale <- sub:
			default:
			}
		}
		for j := 0; j < 4; j++ {
			runChecked(t, sc, sc.Prepare(), fmsg, rep)
		}
	}
	close(done)
	wg.Wait()
}

// TestScopeShutdownEndsJoiningListen (SUB-10): a listen whose handler runs when
// Scope.Shutdown's EndStream pass happens is not yet detached; it then
// joined the hub (which only Server.Shutdown closes) and was not ended; it is now ended as it joins.
func TestScopeShutdownEndsJoiningListen(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{})
	s := New(Config{Hooks: Hooks{ListenStart: func(*Call) { close(entered); <-gate }}})
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "http")
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + metaJSON + `}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	rep := &keepReply{}
	r := sc.Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e)
	}
	r.Start()
	<-entered
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		errc <- sc.Shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond) // the EndStream pass has run
	close(gate)
	if err := <-errc; err != nil {
		t.Fatalf("Scope.Shutdown: %v (the listen stream was not ended; answers %q)", err, rep.all())
	}
}
