package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// rareLeft names the fields release clears only under Call.rare that a
// released Call still holds, or "" when it holds none of them.
func rareLeft(c *Call) string {
	var left []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"rare", c.rare}, {"refused", c.refused}, {"hooked", c.hooked},
		{"listening", c.listening}, {"serverEnded", c.serverEnded},
		{"detached", c.detached}, {"detachDone", c.detachDone},
		{"conn", c.conn != nil}, {"hdrs", c.hdrs != nil}, {"values", c.values != nil},
		{"limKey", c.limKey != ""}, {"limRetry", c.limRetry != 0}, {"tdata", c.tdata != nil},
		{"logs", c.logs != logLimit{}}, {"timedOut", c.dl.timedOut},
		{"sub", c.sub != nil},
	} {
		if f.set {
			left = append(left, f.name)
		}
	}
	return strings.Join(left, ",")
}

type rareHeaders struct{}

func (rareHeaders) LookupHeader(string) ([]byte, bool)         { return nil, false }
func (rareHeaders) VisitHeaders(func(name, value []byte) bool) {}

// TestReleaseClearsRare runs requests that set, each in its own way, one
// of the fields release clears only when Call.rare says one is set (the
// transport's setters, the hooks', the limiter's, a refusal's, a listen
// stream's), each in a batch, so that its Call stays the batch's spare.
// Every such field must be clear once the request has ended. It fails
// when a writer of one of them does not set rare.
func TestReleaseClearsRare(t *testing.T) {
	type step func(r *Request)
	starts := 0
	cases := []struct {
		name      string
		cfg       Config
		principal any
		tool      string
		before    step // on the transport's side, before StartInline
		requests  int  // in the batch; the last one's Call is checked
		shut      bool // the scope shuts down before the batch
		refused   bool // the last request is answered with an error
	}{
		{name: "SetTransportData", tool: "fast", before: func(r *Request) { r.SetTransportData(1) }},
		{name: "SetConn", tool: "fast", before: func(r *Request) { r.SetConn(&ConnInfo{}) }},
		{name: "SetHeaders", tool: "fast", before: func(r *Request) { r.SetHeaders(rareHeaders{}) }},
		{name: "SetLimitKey", tool: "fast", before: func(r *Request) { r.SetLimitKey("10.0.0.1") }},
		{name: "SetValues", tool: "values"},
		{name: "hooks", tool: "fast", requests: 2, cfg: Config{Hooks: Hooks{CallStart: func(*Call) { starts++ }}}},
		{name: "limiter", tool: "fast", principal: "alice", requests: 2, cfg: Config{RatePerPrincipal: 0.001, RateBurst: 1}, refused: true},
		{name: "limitKey", tool: "fast", before: func(r *Request) { r.SetLimitKey("10.0.0.2") }, requests: 2, cfg: Config{RatePerPrincipal: 0.001, RateBurst: 1}, refused: true},
		{name: "refused", tool: "fast", shut: true, refused: true},
		{name: "listen", tool: "stream"},
		{name: "listenHooked", tool: "stream", cfg: Config{Hooks: Hooks{ListenStart: func(*Call) {}}}},
		{name: "logs", tool: "logs", cfg: Config{Logging: true, LogInterval: 1e9, LogBurst: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			starts = 0
			s := New(tc.cfg)
			defer func() { _ = s.Shutdown(context.Background()) }()
			_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
			_ = s.AddTool(Tool{Name: "values", Inline: true, Handler: func(c *Call) error {
				c.SetValues(context.Background())
				c.Text("ok")
				return nil
			}})
			_ = s.AddTool(Tool{Name: "stream", Inline: true, Handler: listen})
			_ = s.AddTool(Tool{Name: "logs", Inline: true, Handler: func(c *Call) error {
				c.Log("info", "t", "a")
				c.Log("info", "t", "b")
				c.Text("ok")
				return nil
			}})
			sc := NewScope(s, "tcp")
			if tc.shut {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_ = sc.Shutdown(ctx)
			}
			rep := &stageReply{stage: make([]byte, 0, 1<<14)}
			b := sc.StartBatch()
			defer b.End()
			b.SetReplier(rep)
			var c *Call
			var ref RequestRef
			for i := range max(tc.requests, 1) {
				msg := batchMsg(string(rune('1'+i)), tc.tool)
				if tc.tool == "stream" {
					msg = []byte(strings.Replace(string(msg), `"arguments":{}`, `"arguments":{},"notifications":{}`, 1))
				}
				if tc.tool == "logs" {
					msg = []byte(strings.Replace(string(msg), `clientCapabilities":{}`, `clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"`, 1))
				}
				r := b.Prepare()
				if err := codec.Peek(msg, r.Envelope()); err != nil {
					t.Fatal(err)
				}
				r = sc.BeginInBatch(r, b, context.Background(), msg, rep, tc.principal)
				c = r.c
				if e := r.Check(); e != nil {
					t.Fatalf("check: %s", e.Message)
				}
				if tc.before != nil {
					tc.before(r)
				}
				ref = r.Ref()
				if !r.StartInline() {
					t.Fatal("not run inline")
				}
			}
			if tc.tool == "logs" && s.Stats().LogsDropped.Load() != 1 {
				t.Fatalf("%d log messages dropped, want 1", s.Stats().LogsDropped.Load())
			}
			if tc.tool == "stream" && !ref.EndStream() {
				t.Fatal("the stream was not open")
			}
			if b.spare != c {
				t.Fatal("the request's Call is not the batch's spare")
			}
			last := string(rep.stage)
			if i := strings.LastIndexByte(last[:max(len(last)-1, 0)], '\n'); i >= 0 {
				last = last[i+1:]
			}
			if got := strings.Contains(last, `"error":`); got != tc.refused {
				t.Fatalf("last answer %q: error %v, want %v", last, got, tc.refused)
			}
			if tc.name == "hooks" && starts != 2 {
				t.Fatalf("CallStart ran %d times, want 2", starts)
			}
			if left := rareLeft(c); left != "" {
				t.Fatalf("released Call still holds %s", left)
			}
		})
	}
}

// TestRunArmsTimeout: a request with a timeout that Request.Run runs on
// the caller's goroutine is answered by its timeout while its handler
// still waits (Run arms it: admit no longer does).
func TestRunArmsTimeout(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	release := make(chan struct{})
	_ = s.AddTool(Tool{Name: "slow", Timeout: 50 * time.Millisecond, Handler: func(c *Call) error {
		<-release
		return nil
	}})
	sc := NewScope(s, "tcp")
	rep := &stageReply{}
	msg := batchMsg("1", "slow")
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	r := sc.Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatalf("check: %s", e.Message)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run()
	}()
	var got []string
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0; {
		if time.Now().After(deadline) {
			close(release)
			<-done
			t.Fatal("no answer from the timeout while the handler waits")
		}
		time.Sleep(5 * time.Millisecond)
		rep.mu.Lock()
		got = append(got, rep.other...)
		rep.mu.Unlock()
	}
	close(release)
	<-done
	if !strings.Contains(got[0], "Request timed out") {
		t.Fatalf("answer %q, want the timeout's", got[0])
	}
}

// watchedCtx is a parent that can be cancelled and counts what
// context.AfterFunc registers on it (its AfterFunc method) and stops.
type watchedCtx struct {
	context.Context
	mu          sync.Mutex
	regs, stops int
}

// Value hides the embedded cancelCtx, which context.AfterFunc would
// otherwise register with directly (past this AfterFunc method).
func (w *watchedCtx) Value(any) any { return nil }

func (w *watchedCtx) AfterFunc(f func()) func() bool {
	w.mu.Lock()
	w.regs++
	w.mu.Unlock()
	return func() bool {
		w.mu.Lock()
		w.stops++
		w.mu.Unlock()
		return true
	}
}

// TestReleaseStopsParentWatch: a request begun with a parent that can be
// cancelled stops its watch of the parent when it ends (release, which
// tests stopParent only with rare: watchParent sets it), so that a
// long-lived parent keeps no callback per request that ran under it.
func TestReleaseStopsParentWatch(t *testing.T) {
	s, _ := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "tcp")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &watchedCtx{Context: ctx}
	rep := &keepReply{}
	for i := range 3 {
		msg := batchMsg(string(rune('1'+i)), "fast")
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		r := sc.Begin(w, msg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatalf("check: %s", e.Message)
		}
		r.Run()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.regs != 3 || w.stops != 3 {
		t.Fatalf("%d watches registered, %d stopped: want 3 and 3", w.regs, w.stops)
	}
}
