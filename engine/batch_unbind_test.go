package engine

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/mcpwire/mcpwire/codec"
)

// unbindPrincipal is a caller's identity a test watches through a weak
// pointer (it holds a pointer: never in a tiny block shared with others).
type unbindPrincipal struct{ name string }

// TestSpareKeepsNoPrincipal: the Call a batch keeps for its next request
// (its spare) keeps the bindings of the request that ended there
// (release), and the batch's End, or Discard when the transport gives the
// spare back unbegun, clears them before the pool: no pooled Call keeps
// a caller's principal alive. A Call left in the pool with its principal
// keeps it through the next collection (the pool's victim cache).
func TestSpareKeepsNoPrincipal(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("fast"); return nil }})
	sc := NewScope(s, "tcp")
	for _, discard := range []bool{false, true} {
		w, spare := func() (weak.Pointer[unbindPrincipal], bool) {
			p := &unbindPrincipal{name: "caller"}
			rep := &stageReply{stage: make([]byte, 0, 4096)}
			b := sc.StartBatch()
			runInlineInBatch(t, sc, b, rep, "1", p)
			spare := b.spare != nil && b.spare.principal == p
			if discard {
				b.Prepare().Discard()
			}
			b.End()
			return weak.Make(p), spare
		}()
		if !spare {
			t.Fatalf("discard %v: the batch kept no spare with the request's principal", discard)
		}
		runtime.GC()
		if w.Value() != nil {
			t.Errorf("discard %v: the principal outlived the batch (a pooled Call holds it)", discard)
		}
	}
	// A request on its own: its Call goes to the pool as it ends.
	w := func() weak.Pointer[unbindPrincipal] {
		p := &unbindPrincipal{name: "caller"}
		rep := &stageReply{}
		msg := batchMsg("2", "fast")
		r := sc.Prepare()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginPrepared(r, context.Background(), msg, rep, p, 0)
		if e := r.Check(); e != nil {
			t.Fatalf("check: %v", e.Message)
		}
		if !r.StartInline() {
			t.Fatal("fast did not run inline")
		}
		if len(rep.other) != 1 {
			t.Fatalf("answers %q", rep.other)
		}
		return weak.Make(p)
	}()
	runtime.GC()
	if w.Value() != nil {
		t.Error("alone: the principal outlived its request (a pooled Call holds it)")
	}
}
