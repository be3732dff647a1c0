package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// tmplMsg is a tools/call in the fixture's shape (the shape a PeekMemo
// keeps a template of), with each member the check reads given.
func tmplMsg(id, method, name, version, info, caps string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{"name":"` + name +
		`","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version +
		`","io.modelcontextprotocol/clientInfo":{"name":"` + info + `","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps +
		`,"progressToken":` + id + `}}}`)
}

// tmplRun runs msg on sc through memo (a template hit when memo's
// template is msg's), the way a transport does: the whole check
// ("whole": linestream, legacy), the steps one by one ("steps", HVAL-02),
// those a kept check leaves after CheckKept ("kept": streamhttp) or a
// batch's check (b != nil, any other mode). It returns the answer, and whether the Call
// held the kept check of msg's template before the check ran.
func tmplRun(t *testing.T, sc *Scope, memo *codec.PeekMemo, b *Batch, mode string, msg []byte) (string, bool) {
	t.Helper()
	rep := &keepReply{}
	r := sc.Prepare()
	if err := codec.PeekWith(msg, r.Envelope(), codec.PeekConfig{Memo: memo}); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	if b != nil {
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
	} else {
		r = sc.BeginPrepared(r, context.Background(), msg, rep, nil, 0)
	}
	kept := r.c.tmplHit()
	var e *codec.Error
	switch steps := []func() *codec.Error{r.CheckMeta, r.CheckVersion, r.CheckMethod, r.CheckTarget, r.CheckCapabilities}; mode {
	case "kept":
		// streamhttp's way: the three steps a kept check decided are
		// skipped when CheckKept says it holds.
		if r.CheckKept() {
			steps = []func() *codec.Error{r.CheckMeta, r.CheckCapabilities}
		}
		fallthrough
	case "steps":
		for _, step := range steps {
			if e = step(); e != nil {
				break
			}
		}
	default:
		e = r.Check()
	}
	if e != nil {
		r.Fail(e)
	} else if b != nil {
		r.Start()
	} else {
		r.Run()
	}
	got := rep.all()
	if len(got) != 1 {
		t.Fatalf("%s: %d answers", msg, len(got))
	}
	return got[0], kept
}

// TestTemplateCheckKept: a request taken by a PeekMemo template whose
// check a Call keeps (tmplHit) is answered exactly as the same message
// peeked without a memo, for messages one byte off the template in each
// member the check reads, around every change of the registry that the
// check depends on (a tool removed, added, replaced by one that requires
// a client capability), for two servers that share the memo and the
// Calls, and for the three ways the transports check.
func TestTemplateCheckKept(t *testing.T) {
	const (
		tc = "tools/call"
		v  = "2026-07-28"
	)
	answer := func(s string) func(*Call) error {
		return func(c *Call) error { c.Text(s); return nil }
	}
	variants := [][]byte{
		tmplMsg("1", tc, "echo", v, "bench", `{}`),
		tmplMsg("2", "tools/cal", "echo", v, "bench", `{}`),
		tmplMsg("3", "tools/calm", "echo", v, "bench", `{}`),
		tmplMsg("4", "tools/list", "echo", v, "bench", `{}`),
		tmplMsg("5", "tools/calL", "echo", v, "bench", `{}`),
		tmplMsg("6", tc, "echp", v, "bench", `{}`),
		tmplMsg("7", tc, "ech", v, "bench", `{}`),
		tmplMsg("8", tc, "echoo", v, "bench", `{}`),
		tmplMsg("9", tc, "needs", v, "bench", `{}`),
		tmplMsg("10", tc, "needs", v, "bench", `{"elicitation":{}}`),
		tmplMsg("11", tc, "echo", "2026-07-29", "bench", `{}`),
		tmplMsg("12", tc, "echo", "2026-07-2", "bench", `{}`),
		tmplMsg("13", tc, "echo", "2025-11-25", "bench", `{}`),
		tmplMsg("14", tc, "echo", v, "bencg", `{}`),
		tmplMsg("15", tc, "echo", v, "bench", `{"roots":{}}`),
		tmplMsg("16", tc, "other", v, "bench", `{}`),
	}
	// What changes the registry between the rounds.
	changes := []func(s *Server){
		func(s *Server) {},
		func(s *Server) { s.RemoveTool("echo") },
		func(s *Server) { _ = s.AddTool(Tool{Name: "echo", Inline: true, Handler: answer("echo again")}) },
		func(s *Server) { _ = s.AddTool(Tool{Name: "other", Inline: true, Handler: answer("other")}) },
		func(s *Server) {
			_ = s.AddTool(Tool{Name: "echo", Inline: true, RequiredClientCapabilities: []string{"elicitation"}, Handler: answer("echo, elicitation")})
		},
		func(s *Server) { s.RemoveTool("other") },
		func(s *Server) { _ = s.AddTool(Tool{Name: "echp", Inline: true, Handler: answer("echp")}) },
		func(s *Server) { // no tool left: tools/call is not served
			for _, n := range []string{"echo", "echp", "needs"} {
				s.RemoveTool(n)
			}
		},
		func(s *Server) { _ = s.AddTool(Tool{Name: "echo", Inline: true, Handler: answer("echo last")}) },
	}
	newServer := func(cfg Config) *Server {
		s := New(cfg)
		_ = s.AddTool(Tool{Name: "echo", Inline: true, Handler: answer("echo")})
		_ = s.AddTool(Tool{Name: "needs", Inline: true, RequiredClientCapabilities: []string{"elicitation"}, Handler: answer("needs")})
		return s
	}
	for _, mode := range []string{"whole", "steps", "kept", "batch"} {
		t.Run(mode, func(t *testing.T) {
			s := newServer(Config{})
			defer func() { _ = s.Shutdown(context.Background()) }()
			// A second server that shares the memo and the Call pool: it
			// has no tool named echo.
			s2 := New(Config{})
			defer func() { _ = s2.Shutdown(context.Background()) }()
			_ = s2.AddTool(Tool{Name: "echp", Inline: true, Handler: answer("s2 echp")})
			sc, sc2 := NewScope(s, "tcp"), NewScope(s2, "tcp")
			memo := new(codec.PeekMemo)
			kept := 0
			run := func(sc *Scope, msg []byte) {
				var b *Batch
				if mode == "batch" {
					b = sc.StartBatch()
					defer b.End()
				}
				got, k := tmplRun(t, sc, memo, b, mode, msg)
				if k {
					kept++
				}
				want, _ := tmplRun(t, sc, nil, b, mode, msg)
				if got != want {
					t.Fatalf("%s\n got %s\nwant %s (no memo)", msg, got, want)
				}
			}
			for _, change := range changes {
				change(s)
				for _, m := range variants {
					// Learn the fixture's template, hit it, then the
					// variant (a miss, then learned and hit), the fixture
					// again, and both on the other server.
					for _, msg := range [][]byte{variants[0], variants[0], variants[0], m, m, m, m, variants[0], variants[0], variants[0]} {
						run(sc, msg)
					}
					run(sc2, m)
					run(sc2, variants[0])
					run(sc, variants[0])
				}
			}
			if kept < 100 {
				t.Fatalf("the kept check was there for %d requests: want the test to use it", kept)
			}
		})
	}
	t.Run("tool filter", func(t *testing.T) {
		asked := 0
		s := newServer(Config{ToolFilter: func(c *Call, tl *Tool) bool { asked++; return asked%2 == 0 }})
		defer func() { _ = s.Shutdown(context.Background()) }()
		sc := NewScope(s, "tcp")
		memo := new(codec.PeekMemo)
		var got []string
		for range 6 {
			a, _ := tmplRun(t, sc, memo, nil, "whole", variants[0])
			got = append(got, a)
		}
		if asked != 6 || strings.Count(strings.Join(got, ""), "Unknown tool") != 3 {
			t.Fatalf("filter asked %d times, answers %q: want it asked for each of 6, 3 refused", asked, got)
		}
	})
}

// TestKeepCheckRefuses: keepCheck decides every step again from the
// envelope, against the registry as it is, and keeps nothing when they
// do not all pass: not after a transport ran only some of the steps (no
// CheckVersion here), not when the tool the steps found is no longer the
// registry's (replaced between checkTarget's lookup and keepCheck).
func TestKeepCheckRefuses(t *testing.T) {
	answer := func(s string) func(*Call) error {
		return func(c *Call) error { c.Text(s); return nil }
	}
	t.Run("version not checked", func(t *testing.T) {
		s := New(Config{})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "echo", Inline: true, Handler: answer("echo")})
		sc := NewScope(s, "tcp")
		memo := new(codec.PeekMemo)
		msg := tmplMsg("1", "tools/call", "echo", "2026-07-29", "bench", `{}`)
		for range 2 {
			tmplRun(t, sc, memo, nil, "whole", msg) // learned, then a hit
		}
		r := sc.Prepare()
		if err := codec.PeekWith(msg, r.Envelope(), codec.PeekConfig{Memo: memo}); err != nil || r.Envelope().Template() == 0 {
			t.Fatalf("peek: %v, template %d: want a hit", err, r.Envelope().Template())
		}
		r = sc.BeginPrepared(r, context.Background(), msg, &keepReply{}, nil, 0)
		if e, e2 := r.CheckMethod(), r.CheckTarget(); e != nil || e2 != nil {
			t.Fatalf("CheckMethod %v, CheckTarget %v", e, e2)
		}
		kept := r.c.tmplHit()
		r.Fail(codec.NewError(codec.CodeInternalError, "x"))
		got, _ := tmplRun(t, sc, memo, nil, "whole", msg)
		if kept || !strings.Contains(got, "-32022") {
			t.Fatalf("kept %v, then %s: want nothing kept, -32022", kept, got)
		}
	})
	t.Run("tool replaced", func(t *testing.T) {
		s := New(Config{})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "echo", Inline: true, Handler: answer("old")})
		sc := NewScope(s, "tcp")
		memo := new(codec.PeekMemo)
		msg := tmplMsg("1", "tools/call", "echo", "2026-07-28", "bench", `{}`)
		tmplRun(t, sc, memo, nil, "whole", msg)
		r := sc.Prepare()
		if err := codec.PeekWith(msg, r.Envelope(), codec.PeekConfig{Memo: memo}); err != nil || r.Envelope().Template() == 0 {
			t.Fatalf("peek: %v, template %d: want a hit", err, r.Envelope().Template())
		}
		r = sc.BeginPrepared(r, context.Background(), msg, &keepReply{}, nil, 0)
		old := s.lookupTool([]byte("echo"))
		_ = s.AddTool(Tool{Name: "echo", Inline: true, Handler: answer("new")})
		// As if checkTarget had found the tool just before the AddTool.
		r.c.method, r.c.tool = toolsCallMethod, old
		r.c.keepCheck()
		kept := r.c.tmplHit()
		r.Fail(codec.NewError(codec.CodeInternalError, "x"))
		got, _ := tmplRun(t, sc, memo, nil, "whole", msg)
		if kept || !strings.Contains(got, `"new"`) {
			t.Fatalf("kept %v, then %s: want nothing kept, the new tool's answer", kept, got)
		}
	})
}
