package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// keepReply is a Replier that keeps the replies' text.
type keepReply struct {
	mu  sync.Mutex
	got []string
}

func (r *keepReply) Notify(*Request, []byte) error { return nil }
func (r *keepReply) Reply(_ *Request, f []byte, _ int) error {
	r.mu.Lock()
	r.got = append(r.got, string(f))
	r.mu.Unlock()
	return nil
}
func (r *keepReply) Done(*Request) {}

func (r *keepReply) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// batchMsg is a tools/call of tool with id.
func batchMsg(id, tool string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
}

// fastSlowServer is an engine with an Inline tool "fast" and a tool
// "slow", run by a worker, that answers once release is closed.
func fastSlowServer() (s *Server, release chan struct{}) {
	s, release = New(Config{}), make(chan struct{})
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	_ = s.AddTool(Tool{Name: "slow", Handler: func(c *Call) error { <-release; c.Text("ok"); return nil }})
	return s, release
}

// startInBatch peeks msg into a prepared request of b, begins, checks and
// starts it, as the line transports do.
func startInBatch(t testing.TB, sc *Scope, b *Batch, msg []byte, rep Replier) {
	t.Helper()
	r := sc.Prepare()
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
	if e := r.Check(); e != nil {
		r.Fail(e)
		return
	}
	r.Start()
}

// startInlineIn begins msg as b's next request (b.Prepare), checks it and
// runs it inline on this goroutine, failing t unless both pass; it returns
// the request's Call (the batch's spare once the request ended there).
func startInlineIn(t testing.TB, sc *Scope, b *Batch, msg []byte, rep Replier) *Call {
	t.Helper()
	r := b.Prepare()
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
	c := r.c
	if e := r.Check(); e != nil {
		t.Fatalf("check: %s", e.Message)
	}
	if !r.StartInline() {
		t.Fatal("not run inline")
	}
	return c
}

// TestBatchDurations: the inline requests of a batch are recorded once, at
// End, from the batch's start; a request that goes to a worker leaves the
// batch and is recorded when it ends, also from the batch's start.
func TestBatchDurations(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	count := func() (n uint64, sum time.Duration) {
		s.RequestDurations(func(h *DurationHistogram) {
			if h.Transport == "tcp" && h.Method == "tools/call" {
				n, sum = h.Count, h.Sum
			}
		})
		return n, sum
	}
	b := sc.StartBatch()
	if b.at == 0 {
		t.Fatal("the batch read no clock with the histograms on")
	}
	b.at -= Stamp(2 * time.Second) // arrived 2 s ago, whatever the machine's speed
	startInBatch(t, sc, b, batchMsg("1", "fast"), rep)
	startInBatch(t, sc, b, batchMsg("2", "slow"), rep)
	startInBatch(t, sc, b, batchMsg("3", "fast"), rep)
	if n, _ := count(); n != 0 {
		t.Fatalf("%d recorded before End: want the batch's requests recorded at its end", n)
	}
	b.End()
	if n := s.Stats().Requests.Load(); n != 3 {
		t.Fatalf("Stats.Requests = %d after End, want 3 (two counted by the batch, one on its own)", n)
	}
	if n, sum := count(); n != 2 || sum < 4*time.Second {
		t.Fatalf("after End: %d requests, sum %v; want the 2 inline ones, each from the batch's start (>= 2s)", n, sum)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for n, _ := count(); n != 3; n, _ = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d recorded: the worker's request was not", n)
		}
		time.Sleep(time.Millisecond)
	}
	if _, sum := count(); sum < 6*time.Second {
		t.Fatalf("sum %v: the worker's request did not count from the batch's start", sum)
	}
	if got := len(rep.all()); got != 3 {
		t.Fatalf("%d replies, want 3", got)
	}
}

// TestBatchShutdownWaitsAndCancels: an inline request of a batch is in
// flight for Scope.Shutdown (which waits for it, and cancels it when its
// grace period ends) although it is registered only through its batch,
// and Server.Load counts it (RELIABILITY C13, C14).
func TestBatchShutdownWaitsAndCancels(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	running := make(chan struct{})
	cancelled := make(chan struct{})
	_ = s.AddTool(Tool{Name: "block", Inline: true, Handler: func(c *Call) error {
		close(running)
		select {
		case <-c.Done():
			close(cancelled)
		case <-time.After(10 * time.Second): // the failure: never cancelled
		}
		c.Text("ok")
		return nil
	}})
	sc := NewScope(s, "unix")
	rep := &keepReply{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := sc.StartBatch()
		startInBatch(t, sc, b, batchMsg("1", "block"), rep)
		b.End()
	}()
	<-running
	inflight := 0
	for _, l := range s.Load() {
		if l.Transport == "unix" {
			inflight = l.InFlight
		}
	}
	if inflight != 1 {
		t.Fatalf("Load: %d in flight on unix, want the batch's running request", inflight)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := sc.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown = %v with an inline request running: want it to wait until its grace period ends", err)
	}
	// The handler closes cancelled before it returns and the batch ends,
	// so once done is closed, cancelled is closed too if, and only if,
	// the request was cancelled. (A select on both could pick done when
	// both are ready: the CI failure of stop 30.)
	<-done
	select {
	case <-cancelled:
	default:
		t.Fatal("the running inline request was not cancelled when Shutdown's grace period ended")
	}
	if err := sc.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown = %v once the batch ended", err)
	}
}

// TestBatchRefusedWhenClosing: once the scope is shutting down, a new
// batch's requests are answered "Server is shutting down" and counted,
// as requests begun on their own are (RELIABILITY C14).
func TestBatchRefusedWhenClosing(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := 0
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { ran++; c.Text("ok"); return nil }})
	sc := NewScope(s, "stdio")
	if err := sc.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := &keepReply{}
	b := sc.StartBatch()
	startInBatch(t, sc, b, batchMsg("1", "fast"), rep)
	startInBatch(t, sc, b, batchMsg("2", "fast"), rep)
	b.End()
	got := rep.all()
	if ran != 0 || len(got) != 2 || !strings.Contains(got[0], "shutting down") || !strings.Contains(got[1], "shutting down") {
		t.Fatalf("ran %d, replies %q: want both refused", ran, got)
	}
	if n := s.Stats().ShutdownRefused.Load(); n != 2 {
		t.Fatalf("ShutdownRefused = %d, want 2", n)
	}
	// Another scope of the same engine is not closing: its batches go on.
	other := NewScope(s, "tcp")
	b = other.StartBatch()
	startInBatch(t, other, b, batchMsg("3", "fast"), rep)
	b.End()
	if ran != 1 {
		t.Fatalf("ran %d on an open scope, want 1", ran)
	}
}

// TestBatchListenLeaves: a listen stream begun in a batch outlives the
// batch: it is registered on its own, so Scope.Shutdown still ends it
// (SUB-10) after the batch has ended.
func TestBatchListenLeaves(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddResource(Resource{URI: "test://r", Name: "r", Handler: func(c *Call, uri string, vars map[string]string) error { return nil }})
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	b := sc.StartBatch()
	r := sc.Prepare()
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Run() // on this goroutine: the stream detaches and lives on
	b.End()
	if n := s.tracker.count(sc); n != 1 {
		t.Fatalf("%d of the scope's requests in flight after the batch ended: want the listen stream", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sc.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	got := rep.all()
	if len(got) != 1 || !strings.Contains(got[0], `"resultType":"complete"`) {
		t.Fatalf("replies %q: want the stream's final result", got)
	}
}

// TestBatchToolLookup: the batch's memo of the last tool named never
// outlives a registry change, and tells tools apart: every call of one
// batch runs the tool registered under its name at that moment.
func TestBatchToolLookup(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	tool := func(name, answer string) Tool {
		return Tool{Name: name, Inline: true, Handler: func(c *Call) error { c.Text(answer); return nil }}
	}
	_ = s.AddTool(tool("a", "a1"))
	_ = s.AddTool(tool("ab", "ab1"))
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	startInBatch(t, sc, b, batchMsg("1", "a"), rep)
	startInBatch(t, sc, b, batchMsg("2", "ab"), rep)
	startInBatch(t, sc, b, batchMsg("3", "a"), rep)
	if !s.RemoveTool("a") {
		t.Fatal("RemoveTool")
	}
	startInBatch(t, sc, b, batchMsg("4", "a"), rep) // removed: unknown tool
	_ = s.AddTool(tool("a", "a2"))
	startInBatch(t, sc, b, batchMsg("5", "a"), rep)
	b.End()
	got := rep.all()
	want := []string{`"text":"a1"`, `"text":"ab1"`, `"text":"a1"`, `Unknown tool`, `"text":"a2"`}
	if len(got) != len(want) {
		t.Fatalf("%d replies: %q", len(got), got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("reply %d = %s; want %s", i+1, got[i], w)
		}
	}
}

// TestBatchPrepareReuses: the Call of a request that ended on the batch's
// goroutine serves the batch's next request, already reset; one that went
// to a worker is not kept.
func TestBatchPrepareReuses(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	begin := func(r *Request, msg []byte) {
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginInBatch(r, b, context.Background(), msg, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		r.Start()
	}
	r1 := b.Prepare()
	c1, gen := r1.c, r1.c.gen
	begin(r1, batchMsg("1", "fast"))
	r2 := b.Prepare()
	if r2.c != c1 || c1.gen != gen+1 || c1.result {
		t.Fatalf("the ended request's Call was not reused, reset (gen %d → %d)", gen, c1.gen)
	}
	begin(r2, batchMsg("2", "slow")) // to a worker: not the batch's to keep
	if r3 := b.Prepare(); r3.c == c1 {
		t.Fatal("a Call that left the batch came back before its request ended")
	} else {
		r3.Discard()
	}
	b.End()
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for len(rep.all()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("replies %q", rep.all())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestListenMayNotify: a listen stream, which detaches (its Done comes
// after Run returns, from another goroutine), reports MayNotify and not
// Inline, so streamhttp, which Runs on its own goroutine only requests
// that are Inline or cannot notify and takes no reference for the engine
// then, always hands it off instead (Request.Run's contract).
func TestListenMayNotify(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	sc := NewScope(s, "http")
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	r := sc.Prepare()
	if err := codec.Peek(msg, r.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginPrepared(r, context.Background(), msg, &keepReply{}, nil, 0)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	if !r.MayNotify() || r.Inline() {
		t.Errorf("listen: MayNotify %v, Inline %v; want true, false", r.MayNotify(), r.Inline())
	}
	r.Fail(codec.ErrBadParams) // ends it without running it
}

// TestBatchToolKeptAcrossEnd: End keeps the batch's last tool for the
// reads that follow (the pool mostly hands the same Batch back), and a
// kept entry is never used for another registry: after the tool is
// replaced, or with another server whose tool has the same name, the
// lookup finds the current one.
func TestBatchToolKeptAcrossEnd(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	sc := NewScope(s, "tcp")
	b := sc.StartBatch()
	startInBatch(t, sc, b, batchMsg("1", "fast"), &keepReply{})
	old := s.regs().toolsByName["fast"]
	b.End()
	if b.tool != old || b.toolIn != s.regs() {
		t.Fatalf("End dropped the batch's last tool (%p, want %p)", b.tool, old)
	}

	other := New(Config{})
	defer func() { _ = other.Shutdown(context.Background()) }()
	_ = other.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("other"); return nil }})
	if got, want := b.lookupTool(other, []byte("fast")), other.regs().toolsByName["fast"]; got != want || got == old {
		t.Fatalf("another server's lookup: %p, want its own tool %p", got, want)
	}
	if got := b.lookupTool(s, []byte("fast")); got != old {
		t.Fatalf("back on the first server: %p, want %p", got, old)
	}
	s.RemoveTool("fast")
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("new"); return nil }})
	rep := &keepReply{}
	b2 := sc.StartBatch()
	b2.toolIn, b2.tool = b.toolIn, b.tool // as if the pool gave b back
	startInBatch(t, sc, b2, batchMsg("2", "fast"), rep)
	b2.End()
	if got := rep.all(); len(got) != 1 || !strings.Contains(got[0], `"new"`) {
		t.Fatalf("after the tool was replaced: %q, want the new tool's answer", got)
	}
}
