//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestPerCallerLimitAllocs: a principal's worker request that takes an
// in-flight slot and a rate token and gives the slot back allocates
// nothing once warm (the caller's entry is recycled).
func TestPerCallerLimitAllocs(t *testing.T) {
	s := New(Config{RatePerPrincipal: 1e12})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "work", Handler: func(c *Call) error { c.Text("ok"); return nil }})
	sc := NewScope(s, "stdio")
	msg := callMsg("work")
	var env codec.Envelope
	rep := &nopReply{}
	run := func() {
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		r := sc.BeginBorrowed(context.Background(), msg, &env, rep, "alice")
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		r.Run()
	}
	run()
	if n := testing.AllocsPerRun(200, run); n != 0 {
		t.Fatalf("%v allocations per counted request, want 0", n)
	}
	if rep.n != 202 || s.LimitStats().RatePerPrincipal.Load() != 0 {
		t.Fatalf("%d replies, %d refused", rep.n, s.LimitStats().RatePerPrincipal.Load())
	}
}
