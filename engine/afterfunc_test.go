package engine

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// TestDerivedContextsOutliveNoCall: contexts derived from a Call (as a
// state store does per operation) are cancelled when the call ends,
// before it is recycled, and start no goroutine that could read a
// recycled Call: many calls whose handlers leave a derived context
// behind, or cancel it as they return, run clean under the race detector.
func TestDerivedContextsOutliveNoCall(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	var mu sync.Mutex
	var leftover []context.Context
	var cancels []context.CancelFunc // never called: the call's end cancels them
	_ = s.AddTool(Tool{Name: "derive", Handler: func(c *Call) error {
		ctx, cancel := context.WithTimeout(c, time.Hour)
		defer cancel()
		kept, keptCancel := context.WithCancel(c)
		mu.Lock()
		leftover = append(leftover, kept)
		cancels = append(cancels, keptCancel)
		mu.Unlock()
		stop := context.AfterFunc(c, func() {})
		_ = stop
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.Text("ok")
		return nil
	}})
	for i := range 200 {
		msg := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"derive","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		r, rep := beginChecked(t, s, msg)
		r.Start()
		<-rep.done
	}
	mu.Lock()
	defer mu.Unlock()
	_ = cancels
	for i, ctx := range leftover {
		select {
		case <-ctx.Done():
		default:
			t.Fatalf("context %d derived from a call not cancelled when it ended", i)
		}
	}
}

// TestAfterFuncStop: a stopped callback never runs; one registered on an
// ended call runs at once.
func TestAfterFuncStop(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := make(chan string, 4)
	_ = s.AddTool(Tool{Name: "t", Handler: func(c *Call) error {
		stop := c.AfterFunc(func() { ran <- "stopped" })
		if !stop() || stop() {
			t.Error("stop did not report the first removal only")
		}
		c.AfterFunc(func() { ran <- "ran" })
		c.Text("ok")
		return nil
	}})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var env codec.Envelope
	_ = codec.Peek(msg, &env)
	rep := &capture{done: make(chan struct{})}
	r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	_ = r.Check()
	r.Start()
	<-rep.done
	if got := <-ran; got != "ran" {
		t.Fatalf("%s", got)
	}
	select {
	case got := <-ran:
		t.Fatalf("also %s", got)
	case <-time.After(20 * time.Millisecond):
	}
}

// TestEndWaitsForCallbacksRunElsewhere (reply10): a callback of a context
// derived from the Call that a cancellation runs on the canceller's
// goroutine holds the Call back: the request's end (its Replier's Done,
// then its recycling) waits until the callback has returned, even though
// the handler returned long before. end skips that wait only for a Call on
// which no callback ever ran; this fails if the cancellation's callbacks
// leave no mark of it.
func TestEndWaitsForCallbacksRunElsewhere(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	started, unblock := make(chan struct{}), make(chan struct{})
	var finished sync.WaitGroup
	finished.Add(1)
	_ = s.AddTool(Tool{Name: "held", Handler: func(c *Call) error {
		c.AfterFunc(func() {
			close(started)
			<-unblock
			finished.Done()
		})
		<-c.Done() // the test cancels it
		return c.Err()
	}})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"held","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	r, rep := beginChecked(t, s, msg)
	ref := r.Ref()
	r.Start()
	// Wait until the handler has registered its callback.
	for deadline := time.Now().Add(5 * time.Second); ; {
		c := ref.c
		c.mu.Lock()
		n := len(c.afters)
		c.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the handler registered no callback")
		}
		time.Sleep(time.Millisecond)
	}
	go ref.Cancel(context.Canceled) // runs the callback here, where it blocks
	<-started
	select {
	case <-rep.done:
		t.Fatal("the request ended (Done) while a callback of a derived context was still running")
	case <-time.After(100 * time.Millisecond):
	}
	close(unblock)
	<-rep.done
	finished.Wait()
}
