package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// BenchmarkPerCallerLimit: a whole worker-tool request of one principal
// run on the caller's goroutine (Run), with the per-caller limits off and
// at their defaults (one in-flight slot taken and given back), and with a
// rate as well (a token too): what the limiter costs a counted request.
func BenchmarkPerCallerLimit(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"off", Config{MaxListensPerPrincipal: -1, MaxInFlightPerPrincipal: -1}},
		{"in_flight", Config{}},
		{"in_flight+rate", Config{RatePerPrincipal: 1e12}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(bc.cfg)
			defer func() { _ = s.Shutdown(context.Background()) }()
			_ = s.AddTool(Tool{Name: "work", Handler: func(c *Call) error { c.Text("ok"); return nil }})
			sc := NewScope(s, "stdio")
			msg := callMsg("work")
			var env codec.Envelope
			rep := &nopReply{}
			b.ReportAllocs()
			for b.Loop() {
				if err := codec.Peek(msg, &env); err != nil {
					b.Fatal(err)
				}
				r := sc.BeginBorrowed(context.Background(), msg, &env, rep, "alice")
				if e := r.Check(); e != nil {
					b.Fatal(e.Message)
				}
				r.Run()
			}
			if s.LimitStats().InFlightPerPrincipal.Load()+s.LimitStats().RatePerPrincipal.Load() != 0 {
				b.Fatal("refused")
			}
		})
	}
}
