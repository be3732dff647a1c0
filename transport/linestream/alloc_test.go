//go:build !race

package linestream

import (
	"context"
	"strings"
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

// TestOutgrowStageAllocs: inline answers larger than what is left of the
// stage (6 KB each, 24 a read: past the 64 KiB a stage is first taken
// with) are written in a buffer of the Call's own, which is kept: no
// allocation per message in the steady state. What is left, 5 a read
// (0.21 per message), is the stage and the output queue growing past
// 64 KiB, as before answers were written in the stage.
func TestOutgrowStageAllocs(t *testing.T) {
	s := engine.New(engine.Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	text := []byte(strings.Repeat("abcdefgh", 6000/8))
	if err := s.AddTool(engine.Tool{Name: "big", Inline: true, Handler: func(c *engine.Call) error { c.TextBytes(text); return nil }}); err != nil {
		t.Fatal(err)
	}
	var answers int
	m := NewMem(engine.NewScope(s, ""), func(f []byte) error { answers++; return nil }, Config{}, nil)
	defer m.Close()
	var lines []string
	for id := 1; id <= 24; id++ {
		lines = append(lines, sizedLine(id, "big", 0))
	}
	read := []byte(strings.Join(lines, "\n") + "\n")
	for range 20 {
		_ = m.Send(read)
	}
	allocs := testing.AllocsPerRun(50, func() { _ = m.Send(read) }) / 24
	if answers != 24*71 {
		t.Fatalf("%d answers, want %d", answers, 24*71)
	}
	if allocs > 0.25 {
		t.Errorf("%.3f allocs per message, want <= 0.25", allocs)
	}
	t.Logf("%.3f allocs per message", allocs)
}
