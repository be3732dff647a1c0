package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"

	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/transport/legacy"
)

// The fast path (fasthttp, a request of a live session) keeps each
// session's decoded record and encoded _meta with the session, but the
// store stays the truth: a log level set on another replica reaches the
// next call here, a DELETE on another replica ends the session here at
// once, and an idle session expires as on the net/http way. Two replicas
// share one store (the harness's rigs are fasthttp listeners with the
// legacy endpoint mounted, so these requests take the fast path).
func TestFastPathFollowsStore(t *testing.T) {
	leakCheck(t)
	store := state.NewMemory(state.MemoryConfig{})
	defer store.Close()
	a := startRig(t, newEngine(t), legacy.Config{Store: store})
	b := startRig(t, newEngine(t), legacy.Config{Store: store})
	sid := a.initialize(t)
	for i := range 3 {
		if r := a.do(t, "POST", legacyPath, sid, call(10+i, "echo", `{"text":"on a"}`)); r.status != 200 || textOf(t, r.last()) != "on a" {
			t.Fatalf("a: %d %s", r.status, r.raw)
		}
	}
	if r := b.do(t, "POST", legacyPath, sid, call(20, "echo", `{"text":"on b"}`)); r.status != 200 || textOf(t, r.last()) != "on b" {
		t.Fatalf("b: %d %s", r.status, r.raw)
	}
	if r := a.do(t, "POST", legacyPath, sid, call(21, "steps", `{}`)); len(r.msgs) != 1 || textOf(t, r.last()) != "stepped" {
		t.Fatalf("no log level yet, yet: %s", r.raw)
	}
	// b sets the log level: the record moves in the store, and a's next
	// call carries it in its _meta (the log message comes first).
	if r := b.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":22,"method":"logging/setLevel","params":{"level":"info"}}`); r.status != 200 {
		t.Fatalf("setLevel on b: %d %s", r.status, r.raw)
	}
	if r := a.do(t, "POST", legacyPath, sid, call(23, "steps", `{}`)); len(r.msgs) != 2 || r.msgs[0]["method"] != "notifications/message" {
		t.Fatalf("a served the session's _meta it had before b set the level: %s", r.raw)
	}
	// b ends the session: a answers 404 at once, not from its copy.
	if r := b.do(t, "DELETE", legacyPath, sid, ""); r.status != 200 {
		t.Fatalf("DELETE on b: %d", r.status)
	}
	if r := a.do(t, "POST", legacyPath, sid, call(24, "echo", `{"text":"gone"}`)); r.status != 404 {
		t.Fatalf("after DELETE on b, a: %d %s, want 404", r.status, r.raw)
	}
	if n := a.leg.Stats().UnknownSession.Load(); n != 1 {
		t.Fatalf("a: UnknownSession = %d, want 1", n)
	}
	if n := a.leg.Stats().Sessions.Load(); n != 0 {
		t.Fatalf("a still holds %d sessions", n)
	}
}

// With the in-process store (state.Memory) a call reads the session's
// record only when the store was written since this process last read it
// (Memory.Generation): calls in a row ask the store nothing; a write made
// straight to the store (as another replica sharing it would) is seen by
// the next call.
func TestLookupSkipsUnchangedRecord(t *testing.T) {
	leakCheck(t)
	store := state.NewMemory(state.MemoryConfig{})
	defer store.Close()
	rg := startRig(t, newEngine(t), legacy.Config{Store: store})
	sid := rg.initialize(t)
	if r := rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"hi"}`)); r.status != 200 {
		t.Fatalf("echo: %d %s", r.status, r.raw)
	}
	ops := store.Stats().Ops.Load()
	for i := range 5 {
		if r := rg.do(t, "POST", legacyPath, sid, call(3+i, "echo", `{"text":"hi"}`)); r.status != 200 {
			t.Fatalf("echo: %d %s", r.status, r.raw)
		}
	}
	if n := store.Stats().Ops.Load() - ops; n != 0 {
		t.Fatalf("5 calls of an unchanged session made %d store calls, want 0", n)
	}
	// The log level, set in the store itself: the next call carries it.
	ctx := context.Background()
	rec, err := store.Get(ctx, "legacy", state.Handle(sid))
	if err != nil {
		t.Fatal(err)
	}
	val := append(rec.Value[:len(rec.Value)-1:len(rec.Value)-1], `,"level":"info"}`...)
	if _, err := store.CompareAndSet(ctx, "legacy", state.Handle(sid), rec.Version, val, 0); err != nil {
		t.Fatal(err)
	}
	if r := rg.do(t, "POST", legacyPath, sid, call(9, "steps", `{}`)); len(r.msgs) != 2 || r.msgs[0]["method"] != "notifications/message" {
		t.Fatalf("the call after a write to the store did not read it: %s", r.raw)
	}
}

// The record read last expires in the store (its Expires passes) while
// nothing writes to the store: the next call reads the store, and the
// session is gone (404), rather than served from what this process read
// (RELIABILITY E3: an expired handle is gone).
func TestLookupRecordExpiredInStore(t *testing.T) {
	leakCheck(t)
	store := state.NewMemory(state.MemoryConfig{})
	defer store.Close()
	rg := startRig(t, newEngine(t), legacy.Config{Store: store})
	sid := rg.initialize(t)
	ctx := context.Background()
	rec, err := store.Get(ctx, "legacy", state.Handle(sid))
	if err != nil {
		t.Fatal(err)
	}
	// Another replica's write with a short expiry (a store's TTL is
	// the writer's to set).
	const ttl = 200 * time.Millisecond
	if _, err := store.CompareAndSet(ctx, "legacy", state.Handle(sid), rec.Version, rec.Value, ttl); err != nil {
		t.Fatal(err)
	}
	if r := rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"hi"}`)); r.status != 200 {
		t.Fatalf("echo: %d %s", r.status, r.raw)
	}
	time.Sleep(2 * ttl)
	if r := rg.do(t, "POST", legacyPath, sid, call(3, "echo", `{"text":"hi"}`)); r.status != 404 {
		t.Fatalf("after the record expired in the store: %d %s, want 404", r.status, r.raw)
	}
}

// An idle session expires on the fast path as on the net/http way: the
// next tools/call is 404, and the session is gone from the store.
func TestFastPathIdleExpiry(t *testing.T) {
	leakCheck(t)
	store := state.NewMemory(state.MemoryConfig{})
	defer store.Close()
	const idle = 300 * time.Millisecond
	rg := startRig(t, newEngine(t), legacy.Config{IdleTimeout: idle, Store: store})
	sid := rg.initialize(t)
	if r := rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"hi"}`)); r.status != 200 {
		t.Fatalf("echo: %d %s", r.status, r.raw)
	}
	time.Sleep(2 * idle)
	if r := rg.do(t, "POST", legacyPath, sid, call(3, "echo", `{"text":"hi"}`)); r.status != 404 {
		t.Fatalf("idle session: %d %s, want 404", r.status, r.raw)
	}
	if rg.leg.Stats().Expired.Load() != 1 {
		t.Fatalf("Expired = %d, want 1", rg.leg.Stats().Expired.Load())
	}
}

// Many connections share one session, as wrk's 64 do: every call is
// answered with its own id and text, the pooled calls and working space
// never mixing two requests (run under -race too).
func TestFastPathConcurrentCalls(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	const workers, each = 8, 40
	errs := make(chan string, workers*each)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				id := 1000 + w*each + i
				text := fmt.Sprintf("w%d-%d", w, i)
				r := rg.do(t, "POST", legacyPath, sid, call(id, "echo", `{"text":"`+text+`"}`))
				// (no t.Fatal off the test's goroutine: the raw body is compared)
				want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}`, id, text)
				if r.status != 200 || r.raw != want {
					errs <- fmt.Sprintf("id %d: %d %s", id, r.status, r.raw)
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestFastPathStreamedCallKeepsID: the fast path keys a call in flight by
// its id's bytes in fasthttp's body; once a notification has turned the
// answer into a stream the call outlives the handler, and the body's
// buffer goes back to fasthttp's pool for other requests. The call stays
// findable by its id: a second request with the id is refused as in
// flight, and notifications/cancelled for it ends it.
func TestFastPathStreamedCallKeepsID(t *testing.T) {
	leakCheck(t)
	eng := newEngine(t)
	if err := eng.AddTool(engine.Tool{
		Name: "notewait", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *engine.Call) error {
			c.Progress(1, 2, "started")
			<-c.Done()
			return c.Err()
		},
	}); err != nil {
		t.Fatal(err)
	}
	rg := startRig(t, eng, legacy.Config{})
	sid := rg.initialize(t)
	done := make(chan *reply, 1)
	go func() {
		done <- rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":"kk","method":"tools/call","params":{"name":"notewait","arguments":{},"_meta":{"progressToken":"p"}}}`)
	}()
	eventually(t, "the request in flight", func() bool { return rg.eng.Stats().Requests.Load() >= 2 })
	time.Sleep(20 * time.Millisecond)
	// Other requests reuse the pooled body buffers: the bytes where "kk"
	// was are now another body's.
	for i := range 20 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"z%d","method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}`, i%10, strings.Repeat("y", i))
		if r := rg.do(t, "POST", legacyPath, sid, body); r.status != 200 || r.last()["result"] == nil {
			t.Fatalf("echo %d: %s", i, r.raw)
		}
	}
	if r := rg.do(t, "POST", legacyPath, sid, call(1, "echo", `{"text":"x"}`)); r.status != 200 {
		t.Fatalf("echo: %s", r.raw)
	}
	r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":"kk","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	if e, _ := r.last()["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "already in flight") {
		t.Fatalf("a second request with the id of one in flight: %s", r.raw)
	}
	rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"kk"}}`)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled request still open")
	}
}

// TestMountedDuplicateLinesLive (F2): a tools/call of a live session with
// two Mcp-Session-Id lines, or two MCP-Protocol-Version lines, both
// holding the session's own values, is refused as ServeHTTP refuses it,
// through streamhttp's mount, which hands the fast path the fields it
// walked (ServeFastFields: two lines of one of them must decline, not
// serve the last).
func TestMountedDuplicateLinesLive(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	for _, tc := range []struct{ name, v string }{
		{legacy.HeaderSession, sid},
		{legacy.HeaderProtocol, "2025-11-25"},
	} {
		req, _ := http.NewRequest("POST", rg.base+legacyPath, strings.NewReader(call(1, "echo", `{"text":"x"}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(legacy.HeaderSession, sid)
		req.Header[tc.name] = []string{tc.v, tc.v}
		resp, err := rg.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "more than one " + tc.name + " header"; resp.StatusCode != 400 || !strings.Contains(string(body), want) {
			t.Errorf("two %s lines: %d %s, want 400 %q", tc.name, resp.StatusCode, body, want)
		}
	}
	if r := rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"x"}`)); r.status != 200 {
		t.Fatalf("one of each: %d %s", r.status, r.raw)
	}
}

// TestMaxDepthFromEngine: the fast path peeks a call with the engine's
// MaxDepth (Server.maxDepth, read once in New), not a default of its own:
// with MaxDepth 6, a call nested 7 deep is refused as too deep (-32600),
// the same call nested 5 deep is served.
func TestMaxDepthFromEngine(t *testing.T) {
	leakCheck(t)
	eng := engine.New(engine.Config{Name: "legacy-test", Version: "1", MaxDepth: 6})
	if err := eng.AddTool(engine.Tool{
		Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(c *engine.Call) error { c.Text("ok"); return nil },
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Shutdown(context.Background()) })
	rg := startRig(t, eng, legacy.Config{})
	sid := rg.initialize(t)
	if r := rg.do(t, "POST", legacyPath, sid, call(1, "echo", `{"a":[[1]]}`)); r.status != 200 || r.last()["result"] == nil {
		t.Fatalf("5 deep: %d %s", r.status, r.raw)
	}
	r := rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"a":[[[[1]]]]}`))
	if e, _ := r.last()["error"].(map[string]any); e == nil || e["code"] != float64(-32600) || !strings.Contains(fmt.Sprint(e["message"]), "too deep") {
		t.Fatalf("7 deep: %d %s", r.status, r.raw)
	}
}

// TestMountedChunkedLines: a call whose body is chunked is not one the
// mount's walk of the fields can vouch for (no Content-Length frames it),
// so the fast path scans the raw block itself (ServeFastFields, not
// exact): a call with one line of each field is served, and one with two
// Mcp-Session-Id or two MCP-Protocol-Version lines is refused as
// ServeHTTP refuses it (F2), not served under the last.
func TestMountedChunkedLines(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	post := func(id int, dup string, v string) (int, string) {
		t.Helper()
		// A reader of unknown length: the client sends the body chunked.
		body := io.MultiReader(strings.NewReader(call(id, "echo", `{"text":"x"}`)))
		req, _ := http.NewRequest("POST", rg.base+legacyPath, body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(legacy.HeaderSession, sid)
		req.Header.Set(legacy.HeaderProtocol, "2025-11-25")
		if dup != "" {
			req.Header[dup] = []string{v, v}
		}
		resp, err := rg.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if req.ContentLength != 0 {
			t.Fatalf("request not sent chunked (ContentLength %d)", req.ContentLength)
		}
		return resp.StatusCode, string(raw)
	}
	if st, raw := post(1, "", ""); st != 200 || !strings.Contains(raw, `"result"`) {
		t.Fatalf("chunked, one line of each: %d %s", st, raw)
	}
	for _, tc := range []struct{ name, v string }{
		{legacy.HeaderSession, sid},
		{legacy.HeaderProtocol, "2025-11-25"},
	} {
		if st, raw := post(2, tc.name, tc.v); st != 400 || !strings.Contains(raw, "more than one "+tc.name+" header") {
			t.Errorf("chunked, two %s lines: %d %s, want 400", tc.name, st, raw)
		}
	}
}
