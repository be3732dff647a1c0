package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// TestWordKey: a key matches its own string and nothing else — not a
// string one byte longer or shorter, not one with any single byte
// changed — for every length it holds (4 to 16 bytes); a string of another
// length gets the zero key, which matches nothing (the empty string
// included).
func TestWordKey(t *testing.T) {
	const src = "abcdefghijklmnopqrstu"
	for n := 0; n <= 20; n++ {
		s := src[:n]
		k := makeWordKey(s)
		if n < 4 || n > 16 {
			if k != (wordKey{}) {
				t.Fatalf("len %d: key %+v, want the zero key", n, k)
			}
			if k.is([]byte(s)) || k.is(nil) {
				t.Fatalf("len %d: the zero key matched", n)
			}
			continue
		}
		if !k.is([]byte(s)) {
			t.Fatalf("len %d: %q does not match its own key", n, s)
		}
		if k.is([]byte(src[:n+1])) || k.is([]byte(s[:n-1])) {
			t.Fatalf("len %d: a string a byte longer or shorter matched", n)
		}
		for i := range n {
			b := []byte(s)
			b[i] ^= 0x20
			if k.is(b) {
				t.Fatalf("len %d: %q matched the key of %q (byte %d changed)", n, b, s, i)
			}
		}
	}
}

// batchCall is batchMsg with the params' name and _meta given raw.
func batchCall(id, rawName, meta string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + rawName + `","arguments":{},"_meta":{` + meta + `}}}`)
}

const batchMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// runBatch runs msgs as one batch of sc's and returns their answers.
func runBatch(t *testing.T, sc *Scope, msgs ...[]byte) []string {
	t.Helper()
	rep := &keepReply{}
	b := sc.StartBatch()
	for _, m := range msgs {
		startInBatch(t, sc, b, m, rep)
	}
	b.End()
	return rep.all()
}

// TestBatchCheckUsualOutcome: check's in-place answer for a batch's
// tools/call that names the batch's last tool (two word compares) gives
// what the steps give. Each case runs a first request that leaves the
// tool in the batch, then the one the shortcut must not take.
func TestBatchCheckUsualOutcome(t *testing.T) {
	answer := func(s string) func(*Call) error {
		return func(c *Call) error { c.Text(s); return nil }
	}
	t.Run("escaped name", func(t *testing.T) {
		// The raw bytes of the second name are the first tool's name, but
		// it is escaped: it names the tool "xAyz".
		s := New(Config{})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: `x\u0041yz`, Inline: true, Handler: answer("literal")})
		_ = s.AddTool(Tool{Name: "xAyz", Inline: true, Handler: answer("unescaped")})
		got := runBatch(t, NewScope(s, "tcp"),
			batchCall("1", `x\\u0041yz`, batchMeta), batchCall("2", `x\u0041yz`, batchMeta))
		if len(got) != 2 || !strings.Contains(got[0], `"literal"`) || !strings.Contains(got[1], `"unescaped"`) {
			t.Fatalf("answers %q: want the literal tool's, then xAyz's", got)
		}
	})
	t.Run("tool filter", func(t *testing.T) {
		asked := 0
		s := New(Config{ToolFilter: func(c *Call, tl *Tool) bool { asked++; return false }})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "hidden", Inline: true, Handler: answer("ran")})
		got := runBatch(t, NewScope(s, "tcp"), batchCall("1", "hidden", batchMeta), batchCall("2", "hidden", batchMeta))
		if len(got) != 2 || strings.Contains(got[0]+got[1], `"ran"`) || asked != 2 {
			t.Fatalf("answers %q, filter asked %d times: want two refusals, the filter asked for each", got, asked)
		}
	})
	t.Run("required capability", func(t *testing.T) {
		s := New(Config{})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "needsElicit", Inline: true, RequiredClientCapabilities: []string{"elicitation"}, Handler: answer("ran")})
		withCap := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`
		got := runBatch(t, NewScope(s, "tcp"), batchCall("1", "needsElicit", withCap), batchCall("2", "needsElicit", batchMeta))
		if len(got) != 2 || !strings.Contains(got[0], `"ran"`) || !strings.Contains(got[1], `-32021`) {
			t.Fatalf("answers %q: want the tool's answer, then -32021", got)
		}
	})
	t.Run("replaced tool", func(t *testing.T) {
		s := New(Config{})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "echoTool", Inline: true, Handler: answer("old")})
		_ = s.AddTool(Tool{Name: "another", Inline: true, Handler: answer("another")}) // tools stay served
		sc := NewScope(s, "tcp")
		rep := &keepReply{}
		b := sc.StartBatch()
		startInBatch(t, sc, b, batchCall("1", "echoTool", batchMeta), rep)
		_ = s.AddTool(Tool{Name: "echoTool", Inline: true, Handler: answer("new")})
		startInBatch(t, sc, b, batchCall("2", "echoTool", batchMeta), rep)
		s.RemoveTool("echoTool")
		startInBatch(t, sc, b, batchCall("3", "echoTool", batchMeta), rep)
		b.End()
		got := rep.all()
		if len(got) != 3 || !strings.Contains(got[0], `"old"`) || !strings.Contains(got[1], `"new"`) || !strings.Contains(got[2], `Unknown tool`) {
			t.Fatalf("answers %q: want old, new, then an unknown tool", got)
		}
	})
	t.Run("version", func(t *testing.T) {
		s := New(Config{})
		defer func() { _ = s.Shutdown(context.Background()) }()
		_ = s.AddTool(Tool{Name: "echoTool", Inline: true, Handler: answer("ran")})
		other := `"io.modelcontextprotocol/protocolVersion":"2026-07-29","io.modelcontextprotocol/clientCapabilities":{}`
		got := runBatch(t, NewScope(s, "tcp"), batchCall("1", "echoTool", batchMeta), batchCall("2", "echoTool", other))
		if len(got) != 2 || !strings.Contains(got[0], `"ran"`) || !strings.Contains(got[1], `-32022`) {
			t.Fatalf("answers %q: want the tool's answer, then -32022", got)
		}
	})
}

// TestStartInline: StartInline runs an Inline request without a timeout
// to its end and reports true; a request with a timeout, or one a worker
// runs, is left unstarted (no answer, no Done) and Start runs it after.
func TestStartInline(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("fast"); return nil }})
	_ = s.AddTool(Tool{Name: "timed", Inline: true, Timeout: time.Minute, Handler: func(c *Call) error { c.Text("timed"); return nil }})
	_ = s.AddTool(Tool{Name: "worker", Handler: func(c *Call) error { c.Text("worker"); return nil }})
	// Under Config.Timeout an Inline tool without a Timeout of its own
	// has one too: not run inline.
	st := New(Config{Timeout: time.Minute})
	defer func() { _ = st.Shutdown(context.Background()) }()
	_ = st.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("fast"); return nil }})
	sc, sct := NewScope(s, "tcp"), NewScope(st, "tcp")
	for _, tc := range []struct {
		sc     *Scope
		tool   string
		inline bool
	}{{sc, "fast", true}, {sc, "timed", false}, {sc, "worker", false}, {sct, "fast", false}} {
		sc := tc.sc
		rep := newDoneReply()
		msg := batchMsg("1", tc.tool)
		r := sc.Prepare()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginPrepared(r, context.Background(), msg, rep, nil, 0)
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		if got := r.StartInline(); got != tc.inline {
			t.Fatalf("%s: StartInline %v, want %v", tc.tool, got, tc.inline)
		}
		if !tc.inline {
			if n := len(rep.k.all()); n != 0 || rep.done.Load() != 0 {
				t.Fatalf("%s: %d answers, %d Done before Start: want none", tc.tool, n, rep.done.Load())
			}
			r.Start()
		}
		<-rep.ended
		if got := rep.k.all(); len(got) != 1 || !strings.Contains(got[0], `"`+tc.tool+`"`) {
			t.Fatalf("%s: answers %q", tc.tool, got)
		}
	}
}

// doneReply keeps the answers and counts Done, closing ended at the first.
type doneReply struct {
	k     keepReply
	done  atomic.Int32
	ended chan struct{}
}

func newDoneReply() *doneReply { return &doneReply{ended: make(chan struct{})} }

func (r *doneReply) Notify(*Request, []byte) error { return nil }
func (r *doneReply) Reply(q *Request, f []byte, st int) error {
	return r.k.Reply(q, f, st)
}
func (r *doneReply) Done(*Request) {
	if r.done.Add(1) == 1 {
		close(r.ended)
	}
}

// TestBatchRecover: with SetRecovers, an inline handler's panic reaches
// the batch's goroutine (no recover of its own); Panicking reports it,
// and Recover answers the request -32603, counts it and ends it, after
// which the batch goes on. Outside a handler Panicking is false, and
// Recover of nil (runtime.Goexit) does nothing.
func TestBatchRecover(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "boom", Inline: true, Handler: func(c *Call) error { panic("boom") }})
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("ok"); return nil }})
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	b.SetRecovers()
	var reached any
	func() {
		defer func() {
			if !b.Panicking() {
				t.Error("Panicking is false during a handler's panic")
				return
			}
			reached = recover()
			if !b.Recover(reached) {
				t.Error("Recover found no request")
			}
		}()
		startInBatch(t, sc, b, batchMsg("1", "boom"), rep)
	}()
	if reached == nil {
		t.Fatal("the handler's panic was recovered per request")
	}
	if b.Panicking() || b.Recover("late") || b.Recover(nil) {
		t.Fatal("Panicking or Recover outside a handler's panic")
	}
	startInBatch(t, sc, b, batchMsg("2", "fast"), rep)
	b.End()
	got := rep.all()
	if len(got) != 2 || !strings.Contains(got[0], `"id":1,"error":{"code":-32603`) || !strings.Contains(got[1], `"ok"`) {
		t.Fatalf("answers %q: want -32603 for 1, then 2's", got)
	}
	if n := s.Stats().Panics.Load(); n != 1 {
		t.Fatalf("%d panics counted, want 1", n)
	}
}

// TestBatchParentCancels: a batch's request whose parent context can be
// cancelled is cancelled with it, as a request begun on its own
// (BeginInBatch watches the parent as beginCall does); with a parent
// without Done nothing is watched.
func TestBatchParentCancels(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	cause := errors.New("parent gone")
	ctx, cancel := context.WithCancelCause(context.Background())
	var sawCause, sawWatch, sawNone bool
	_ = s.AddTool(Tool{Name: "waits", Inline: true, Handler: func(c *Call) error {
		sawWatch = c.stopParent != nil
		cancel(cause)
		select { // cancelled by the parent (a bounded wait: a failure, not a hang)
		case <-c.Done():
		case <-time.After(5 * time.Second):
		}
		sawCause = errors.Is(context.Cause(c), cause)
		c.Text("late")
		return nil
	}})
	_ = s.AddTool(Tool{Name: "plain", Inline: true, Handler: func(c *Call) error {
		sawNone = c.stopParent == nil
		c.Text("ok")
		return nil
	}})
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	for _, tc := range []struct {
		tool   string
		parent context.Context
	}{{"waits", ctx}, {"plain", context.Background()}} {
		msg := batchMsg("1", tc.tool)
		r := b.Prepare()
		if err := codec.Peek(msg, r.Envelope()); err != nil {
			t.Fatal(err)
		}
		r = sc.BeginInBatch(r, b, tc.parent, msg, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e)
		}
		r.Start()
	}
	b.End()
	if !sawWatch || !sawCause || !sawNone {
		t.Fatalf("parent watched %v, cancelled with its cause %v, none watched without Done %v", sawWatch, sawCause, sawNone)
	}
	if got := rep.all(); len(got) != 1 || !strings.Contains(got[0], `"ok"`) {
		t.Fatalf("answers %q: want only the second request's (the first was cancelled)", got)
	}
}

// TestReleaseDropsLargeBuffers: release lets go of each buffer over
// maxKeep and keeps the others (C16), whichever of them grew; the one
// test of their capacities together must not skip a large one.
func TestReleaseDropsLargeBuffers(t *testing.T) {
	for i := range 5 {
		c := callPool.Get().(*Call)
		bufs := []*[]byte{&c.buf, &c.out, &c.scratch, &c.argBuf, &c.textBuf}
		for j, p := range bufs {
			// Each its own array: release puts c back in the pool, and a
			// Call whose buffers share one would corrupt the responses of
			// the next test that takes it (out written over by scratch).
			if j == i {
				*p = make([]byte, 0, maxKeep+1)
			} else {
				*p = make([]byte, 0, 512)
			}
		}
		c.release()
		for j, p := range bufs {
			if got := cap(*p); j == i && got != 0 || j != i && got != 512 {
				t.Fatalf("buffer %d over maxKeep: buffer %d has cap %d after release", i, j, got)
			}
		}
	}
}

// TestDoneAfterCancel: a request whose Done was first asked after it was
// cancelled gets a closed channel (closeDoneLocked makes none for it), and
// Err says why.
func TestDoneAfterCancel(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	started, cancelled := make(chan struct{}), make(chan struct{})
	var closed bool
	var err error
	_ = s.AddTool(Tool{Name: "late", Handler: func(c *Call) error {
		close(started)
		<-cancelled
		select {
		case <-c.Done():
			closed = true
		case <-time.After(5 * time.Second):
		}
		err = c.Err()
		c.Text("late")
		return nil
	}})
	sc := NewScope(s, "tcp")
	rep := newDoneReply()
	msg := batchMsg("1", "late")
	r := sc.Prepare()
	if e := codec.Peek(msg, r.Envelope()); e != nil {
		t.Fatal(e)
	}
	r = sc.BeginPrepared(r, context.Background(), msg, rep, nil, 0)
	if e := r.Check(); e != nil {
		t.Fatal(e)
	}
	ref := r.Ref()
	r.Start()
	<-started
	if !ref.Cancel(errors.New("client gone")) {
		t.Fatal("not cancelled")
	}
	close(cancelled)
	<-rep.ended
	if !closed || !errors.Is(err, context.Canceled) {
		t.Fatalf("Done closed %v, Err %v: want closed, context.Canceled", closed, err)
	}
}
