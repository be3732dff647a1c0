package engine

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestProgressClearedOnReuse: a request that sent progress, and one that
// also left a value pending with the timer armed (flushed at its end),
// leave their batch's spare Call with the progress limiter clear. release
// tests sent alone (progress.reset): it fails when a state Progress can
// leave is not cleared.
func TestProgressClearedOnReuse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
	}{{"sent", []float64{1}}, {"pending", []float64{1, 2}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{ProgressInterval: time.Hour})
			defer func() { _ = s.Shutdown(context.Background()) }()
			_ = s.AddTool(Tool{Name: "prog", Inline: true, Handler: func(c *Call) error {
				for _, v := range tc.values {
					c.Progress(v, 0, "m")
				}
				c.Text("ok")
				return nil
			}})
			sc := NewScope(s, "tcp")
			rep := &stageReply{stage: make([]byte, 0, 1<<14)}
			b := sc.StartBatch()
			defer b.End()
			b.SetReplier(rep)
			msg := []byte(strings.Replace(string(batchMsg("1", "prog")), `"_meta":{`, `"_meta":{"progressToken":1,`, 1))
			c := startInlineIn(t, sc, b, msg, rep)
			if b.spare != c {
				t.Fatal("the request's Call is not the batch's spare")
			}
			if n := s.Stats().ProgressSent.Load(); n != uint64(len(tc.values)) {
				t.Fatalf("%d progress notifications sent, want %d", n, len(tc.values))
			}
			if p := &c.prog; p.sent || p.pending || p.armed || p.pmsg != "" || p.last != 0 || p.pv != 0 {
				t.Fatalf("released Call's progress not clear: sent %v pending %v armed %v pmsg %q last %v pv %v",
					p.sent, p.pending, p.armed, p.pmsg, p.last, p.pv)
			}
		})
	}
}
