//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestRequestRecordingAllocs: a request's whole life through a labelled
// scope — begin, checks, an inline tool, the reply, the duration recorded
// in its histogram — allocates nothing, so the metrics cost no allocation
// per request.
func TestRequestRecordingAllocs(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	sc := NewScope(s, "stdio")
	msg := callMsg("fast")
	var env codec.Envelope
	rep := &nopReply{}
	run := func() {
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		r := sc.BeginBorrowed(context.Background(), msg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		r.Run()
	}
	run()
	if a := testing.AllocsPerRun(1000, run); a != 0 {
		t.Fatalf("%.2f allocations per request, want 0", a)
	}
	if h := histOf(s, "tools/call", "stdio"); h == nil || h.Count != 1002 {
		t.Fatalf("histogram: %+v, want 1002 requests recorded", h)
	}
}

// TestObserveAllocs: recording alone, on its own.
func TestObserveAllocs(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	c := &Call{srv: s, scope: NewScope(s, "http"), method: methods["tools/call"]}
	if a := testing.AllocsPerRun(1000, func() { c.t0 = durNow(); c.observeEnd() }); a != 0 {
		t.Fatalf("%.2f allocations per observation, want 0", a)
	}
}
