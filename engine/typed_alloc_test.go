//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

type allocEchoIn struct {
	Text string `json:"text"`
}

type allocEchoOut struct {
	Text  string `json:"text"`
	Count int    `json:"count,omitempty"`
}

func (o allocEchoOut) AppendResultText(dst []byte) []byte { return append(dst, o.Text...) }

// TestTypedEchoAllocs: a typed tool of flat types costs no allocation per
// call — no reflection, no boxing of In or Out, the result encoded once
// into buffers the Call keeps, and the string it decodes carved from a
// chunk the Call keeps (one allocation per strChunkSize bytes of
// strings, under one per call on average). (internal/refserver's
// BenchmarkEcho measures the same path on the reference echo.)
func TestTypedEchoAllocs(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := AddTool(s, Tool{Name: "echo", Inline: true}, func(c *Call, in allocEchoIn) (allocEchoOut, error) {
		return allocEchoOut{Text: in.Text, Count: len(in.Text)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "")
	msg := []byte(echoFixture)
	rep := &nopReplier{}
	var env codec.Envelope
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
	if n := testing.AllocsPerRun(200, run); n > 0 {
		t.Errorf("%.1f allocations per typed call, want 0 (the decoded string from the Call's chunk)", n)
	}
}
