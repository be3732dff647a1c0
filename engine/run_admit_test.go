package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// batchKeep is keepReply that also takes a batch's answers, apart.
type batchKeep struct {
	keepReply
	inBatch int
}

func (r *batchKeep) ReplyInBatch(*Request, []byte) error { r.inBatch++; return nil }

// runOne begins msg on sc (in b when b is not nil, with limit key key when
// not ""), checks it and runs it with Request.Run.
func runOne(t *testing.T, sc *Scope, b *Batch, msg []byte, rep Replier, principal any, key string) {
	t.Helper()
	var r *Request
	if b != nil {
		r = b.Prepare()
	} else {
		r = sc.Prepare()
	}
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	if b != nil {
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, principal)
	} else {
		r = sc.BeginPrepared(r, context.Background(), msg, rep, principal, 0)
	}
	if key != "" {
		r.SetLimitKey(key)
	}
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Run()
}

// TestRunAdmitsAsAdmit: Request.Run takes admit's usual case for a request
// on its own without calling admit; every other case must still go
// through admit. Each subtest fails when Run's shortcut also takes its
// case: the call hooks run (CallStart, CallEnd), a principal's and a limit
// key's rate are counted (the second request refused), and a batch's
// request that is not inline leaves its batch (its answer through Reply,
// not ReplyInBatch).
func TestRunAdmitsAsAdmit(t *testing.T) {
	t.Run("hooks", func(t *testing.T) {
		var starts, ends int
		s := New(Config{Hooks: Hooks{CallStart: func(*Call) { starts++ }, CallEnd: func(*Call, Outcome) { ends++ }}})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
		runOne(t, NewScope(s, "http"), nil, callMsg("fast"), &nopReply{}, nil, "")
		if starts != 1 || ends != 1 {
			t.Fatalf("CallStart %d, CallEnd %d: want 1 and 1", starts, ends)
		}
	})
	for _, who := range []string{"principal", "key"} {
		t.Run(who, func(t *testing.T) {
			s := New(Config{RatePerPrincipal: 1e-6, RateBurst: 1})
			defer func() { _ = s.Shutdown(context.Background()) }()
			_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
			sc := NewScope(s, "http")
			rep := &keepReply{}
			for range 2 {
				if who == "principal" {
					runOne(t, sc, nil, callMsg("fast"), rep, "alice", "")
				} else {
					runOne(t, sc, nil, callMsg("fast"), rep, nil, "10.0.0.1")
				}
			}
			got := rep.all()
			if n := s.LimitStats().RatePerPrincipal.Load(); n != 1 || len(got) != 2 || strings.Contains(got[1], `"ok"`) {
				t.Fatalf("%d refused, replies %q: want the second refused", n, got)
			}
		})
	}
	t.Run("batch", func(t *testing.T) {
		s, release := fastSlowServer()
		close(release)
		defer func() { _ = s.Shutdown(context.Background()) }()
		sc := NewScope(s, "tcp")
		b := sc.StartBatch()
		rep := &batchKeep{}
		b.SetReplier(rep)
		runOne(t, sc, b, batchMsg("1", "slow"), rep, nil, "")
		b.End()
		if got := rep.all(); len(got) != 1 || rep.inBatch != 0 {
			t.Fatalf("replies %q, %d in the batch: want the one through Reply", got, rep.inBatch)
		}
		if n := s.Stats().Requests.Load(); n != 1 {
			t.Fatalf("Stats.Requests %d: want 1", n)
		}
	})
}

// TestRunRefusedAfterScopeShutdown: once its Scope has shut down, a
// request on its own that Request.Run would take by its shortcut (no
// hooks, principal, key or batch) is refused as admit refuses it, while
// another scope of the server still admits. Fails if the shortcut reads
// only the server's closing flag, or only the scope's.
func TestRunRefusedAfterScopeShutdown(t *testing.T) {
	s := New(Config{})
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	closed, open := NewScope(s, "http"), NewScope(s, "stdio")
	if err := closed.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := &keepReply{}
	runOne(t, closed, nil, callMsg("fast"), rep, nil, "")
	runOne(t, open, nil, callMsg("fast"), rep, nil, "")
	got := rep.all()
	if n := s.Stats().ShutdownRefused.Load(); n != 1 || len(got) != 2 || strings.Contains(got[0], `"ok"`) || !strings.Contains(got[1], `"ok"`) {
		t.Fatalf("%d refused, replies %q: want the closed scope's refused, the other's answered", n, got)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	runOne(t, open, nil, callMsg("fast"), rep, nil, "")
	if n := s.Stats().ShutdownRefused.Load(); n != 2 {
		t.Fatalf("%d refused after the server's Shutdown: want 2", n)
	}
}
