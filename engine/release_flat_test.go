package engine

import (
	"context"
	"encoding/json"
	"testing"
)

// TestReleaseClearsFlatBy: a request whose arguments a flat schema of no
// names (a closed empty object) scanned, flatBy set and flatN 0, leaves
// its batch's spare Call with neither set: release tests the two together.
func TestReleaseClearsFlatBy(t *testing.T) {
	s := New(Config{})
	scanned := false
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := s.AddTool(Tool{Name: "open", Inline: true, InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Handler: func(c *Call) error { scanned = c.flatBy != nil; c.Text("ok"); return nil }}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "tcp")
	rep := &stageReply{stage: make([]byte, 0, 1<<14)}
	b := sc.StartBatch()
	defer b.End()
	b.SetReplier(rep)
	msg := batchMsg("1", "open")
	c := startInlineIn(t, sc, b, msg, rep)
	if !scanned {
		t.Fatal("the handler ran without flatBy set")
	}
	if b.spare != c {
		t.Fatal("the request's Call is not the batch's spare")
	}
	if c.flatBy != nil || c.flatN != 0 {
		t.Fatalf("released Call holds flatBy %v, flatN %d", c.flatBy != nil, c.flatN)
	}
}
