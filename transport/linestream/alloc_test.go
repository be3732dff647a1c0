//go:build !race

package linestream

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestEchoAllocs pins the steady-state cost of an echo round trip through
// the line core, with the standard fixture (progressToken included): at
// most 1 allocation per message, inline or on a worker.
func TestEchoAllocs(t *testing.T) {
	for _, inline := range []bool{true, false} {
		s := echoServer(t, inline)
		d, stop := newBenchConn(s)
		chunk := roundTrips(d, 40, 64, echoTail, nil)
		const rounds = 10
		allocs := testing.AllocsPerRun(20, func() {
			chunk = roundTrips(d, rounds, 64, echoTail, chunk)
		}) / (rounds * 64)
		stop()
		_ = s.Shutdown(context.Background())
		if allocs > 1 {
			t.Errorf("inline=%v: %.3f allocs per message, want <= 1", inline, allocs)
		}
		t.Logf("inline=%v: %.3f allocs per message", inline, allocs)
	}
}

// usedExtensions are hooks, a middleware and a tool filter that allocate
// nothing themselves: what the engine adds around them must not either.
func usedExtensions() engine.Config {
	var n int
	return engine.Config{
		Hooks: engine.Hooks{
			CallStart: func(c *engine.Call) { n += len(c.Method()) },
			CallEnd:   func(c *engine.Call, o engine.Outcome) { n += int(o.Reason) + len(c.Transport()) },
		},
		Middleware: []engine.Middleware{func(next engine.HandlerFunc) engine.HandlerFunc {
			return func(c *engine.Call) error {
				_, _ = c.HeaderBytes("x-tenant")
				return next(c)
			}
		}},
		ToolFilter: func(c *engine.Call, t *engine.Tool) bool { return c.Principal() == nil },
	}
}

// TestEchoAllocsWithExtensions: hooks, middleware and a tool filter that
// allocate nothing cost no allocation per message (issue 13): the same
// count as TestEchoAllocs without them.
func TestEchoAllocsWithExtensions(t *testing.T) {
	for _, inline := range []bool{true, false} {
		var got [2]float64
		for i, opt := range []engine.Config{{}, usedExtensions()} {
			s := echoServerWith(t, inline, opt)
			d, stop := newBenchConn(s)
			chunk := roundTrips(d, 40, 64, echoTail, nil)
			const rounds = 10
			got[i] = testing.AllocsPerRun(20, func() {
				chunk = roundTrips(d, rounds, 64, echoTail, chunk)
			}) / (rounds * 64)
			stop()
			_ = s.Shutdown(context.Background())
		}
		if got[1] > got[0]+0.05 {
			t.Errorf("inline=%v: %.3f allocs per message with extensions, %.3f without", inline, got[1], got[0])
		}
		t.Logf("inline=%v: %.3f allocs per message with extensions, %.3f without", inline, got[1], got[0])
	}
}
