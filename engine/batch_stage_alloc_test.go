//go:build !race

package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestStageOutgrowAllocs: an answer that outgrows the stage's room is
// written in a larger buffer, which the Call keeps as its own; the next
// request is then written in the stage only when the room is at least that
// buffer, else in the buffer. With a stage whose room is always smaller
// than the answers, a batch's requests allocate nothing in the steady
// state (dropping the larger buffer at release would allocate one per
// request).
func TestStageOutgrowAllocs(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	text := strings.Repeat("abcdefgh", 3000/8)
	_ = s.AddTool(Tool{Name: "big", Inline: true, Handler: func(c *Call) error { c.Text(text); return nil }})
	sc := NewScope(s, "tcp")
	msg := batchMsg("1", "big")
	rep := &stageReply{stage: make([]byte, 0, 1000)}
	var frames int
	run := func() {
		b := sc.StartBatch()
		b.SetReplier(rep)
		b.SetStage(&rep.stage)
		for range 8 {
			rep.stage = rep.stage[:0] // the room stays under the answer's size
			r := b.Prepare()
			if err := codec.PeekWith(msg, r.Envelope(), codec.PeekConfig{}); err != nil {
				t.Fatal(err)
			}
			r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
			if e := r.Check(); e != nil {
				t.Fatal(e.Message)
			}
			if !r.StartInline() {
				t.Fatal("not inline")
			}
			frames++
		}
		b.End()
	}
	for range 4 {
		run()
	}
	allocs := testing.AllocsPerRun(50, run) / 8
	if allocs > 0.05 {
		t.Errorf("%.3f allocs per request, want 0", allocs)
	}
	t.Logf("%.3f allocs per request (%d answers)", allocs, frames)
}
