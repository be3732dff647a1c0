package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/redisstate"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// The session lifecycle of 2025-11-25 Streamable HTTP: initialize issues
// an Mcp-Session-Id, later requests need it (400 without, 404 for an
// unknown one), DELETE ends it (404 afterwards). RELIABILITY E8.
func TestSessionLifecycle(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	r := rg.do(t, "POST", legacyPath, "", initBody)
	res, _ := r.last()["result"].(map[string]any)
	if res["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize result %v", r.last())
	}
	info, _ := res["serverInfo"].(map[string]any)
	caps, _ := res["capabilities"].(map[string]any)
	if info["name"] != "legacy-test" || caps["tools"] == nil || caps["logging"] == nil || caps["resources"] == nil {
		t.Fatalf("capabilities or serverInfo not taken from the engine: %v", res)
	}
	sid := r.hdr.Get(legacy.HeaderSession)

	r = rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"hi"}`))
	if r.status != 200 || textOf(t, r.last()) != "hi" || r.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("tools/call: %d %s", r.status, r.raw)
	}
	result := r.last()["result"].(map[string]any)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := result[k]; ok {
			t.Errorf("2026-only member %q reached the 2025 client: %s", k, r.raw)
		}
	}
	if r = rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.status != 200 || r.last()["result"] == nil {
		t.Fatalf("ping: %d %s", r.status, r.raw)
	}
	if r = rg.do(t, "POST", legacyPath, "", `{"jsonrpc":"2.0","id":4,"method":"ping"}`); r.status != 400 {
		t.Fatalf("no session id: %d, want 400", r.status)
	}
	for _, bad := range []string{string(state.NewHandle()), "not-a-handle", strings.Repeat("A", 4000)} {
		if r = rg.do(t, "POST", legacyPath, bad, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.status != 404 {
			t.Fatalf("unknown session %.20q: %d, want 404", bad, r.status)
		}
	}
	if got := rg.leg.Stats().UnknownSession.Load(); got != 3 {
		t.Fatalf("UnknownSession = %d, want 3", got)
	}
	if r = rg.do(t, "DELETE", legacyPath, sid, ""); r.status != 200 {
		t.Fatalf("DELETE: %d", r.status)
	}
	if r = rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":6,"method":"ping"}`); r.status != 404 {
		t.Fatalf("after DELETE: %d, want 404", r.status)
	}
	if n := rg.leg.Stats().Sessions.Load(); n != 0 {
		t.Fatalf("Sessions = %d after DELETE", n)
	}
}

// Bad input on the legacy path: batches, a wrong version header, a wrong
// Content-Type.
func TestBadInput(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	if r := rg.do(t, "POST", legacyPath, sid, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`); r.status != 400 || r.last()["error"] == nil {
		t.Fatalf("batch: %d %s", r.status, r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Protocol-Version: 1999-01-01"); r.status != 400 {
		t.Fatalf("unknown version header: %d", r.status)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Mcp-Protocol-Version: 2025-06-18"); r.status != 200 {
		t.Fatalf("2025-06-18 version header: %d", r.status)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Content-Type: text/plain"); r.status != 415 {
		t.Fatalf("text/plain: %d", r.status)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":`); r.status != 400 {
		t.Fatalf("truncated JSON: %d", r.status)
	}
	if r := rg.do(t, "PUT", legacyPath, sid, ""); r.status != 405 {
		t.Fatalf("PUT: %d", r.status)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://nope"}}`); !strings.Contains(r.raw, "-32002") {
		t.Fatalf("unknown resource: want -32002 for a 2025 client, got %s", r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); r.status != 400 {
		t.Fatalf("initialize without protocolVersion: %d", r.status)
	}
	// Arguments that fail the tool's schema are the tool's error for a
	// 2025-11-25 client too (SEP-1303 is Final since that revision): 200,
	// isError true, the failing path named; arguments that are not an
	// object stay -32602.
	r := rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":7}`))
	res, _ := r.last()["result"].(map[string]any)
	if r.status != 200 || res["isError"] != true || textOf(t, r.last()) != "Invalid arguments: arguments.text: expected string, got number" {
		t.Fatalf("schema failure: %d %s", r.status, r.raw)
	}
	if _, ok := res["resultType"]; ok {
		t.Fatalf("2026-only member in a legacy result: %s", r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, sid, call(3, "echo", `[1]`)); !strings.Contains(r.raw, `"code":-32602`) {
		t.Fatalf("arguments not an object: %s", r.raw)
	}
}

// The modern endpoint on the same listener keeps none of the legacy
// behaviour (LEG-01, LEG-02, LEG-07, LEG-09, COMPAT-09): initialize gets
// today's -32022, no Mcp-Session-Id is issued, GET and DELETE are 405, and
// ping, logging/setLevel and resources/subscribe are unknown methods.
func TestModernPathUnchanged(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	legacySID := rg.initialize(t)
	r := rg.do(t, "POST", "/mcp", "", initBody)
	if r.status != 400 || !strings.Contains(r.raw, "-32022") || r.hdr.Get(legacy.HeaderSession) != "" {
		t.Fatalf("initialize on /mcp: %d %s %v (LEG-01, LEG-07)", r.status, r.raw, r.hdr)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := rg.do(t, m, "/mcp", legacySID, ""); r.status != 405 {
			t.Fatalf("%s /mcp: %d, want 405 (LEG-01, LEG-02)", m, r.status)
		}
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, m := range []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{"level":"info","uri":"test://r",` + meta + `}}`
		r := rg.do(t, "POST", "/mcp", legacySID, body, "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: "+m)
		if r.status != 404 || !strings.Contains(r.raw, "-32601") || r.hdr.Get(legacy.HeaderSession) != "" {
			t.Fatalf("%s on /mcp: %d %s (LEG-07)", m, r.status, r.raw)
		}
	}
	// A request without MCP-Protocol-Version is not taken for 2025-03-26
	// on the modern path (LEG-09).
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`
	if r := rg.do(t, "POST", "/mcp", "", body, "Mcp-Method: tools/list"); r.status != 400 {
		t.Fatalf("tools/list on /mcp without MCP-Protocol-Version: %d %s", r.status, r.raw)
	}
	if r := rg.do(t, "POST", "/mcp", "", body, "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"); r.status != 200 || r.hdr.Get(legacy.HeaderSession) != "" {
		t.Fatalf("tools/list on /mcp: %d %s", r.status, r.raw)
	}
	// Another path of the listener is still 404.
	if r := rg.do(t, "POST", "/mcp-2024", "", initBody); r.status != 404 {
		t.Fatalf("unmounted path: %d", r.status)
	}
}

// Progress and log notifications turn the response into an SSE stream;
// logging/setLevel is the session's, carried into every request.
func TestStreamedResponse(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":"p1"}}}`)
	if !strings.HasPrefix(r.hdr.Get("Content-Type"), "text/event-stream") || len(r.msgs) != 3 {
		t.Fatalf("progress: want 2 progress events and the result on SSE, got %s", r.raw)
	}
	if r.msgs[0]["method"] != "notifications/progress" || textOf(t, r.last()) != "stepped" {
		t.Fatalf("progress events: %s", r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`); r.status != 200 || r.last()["result"] == nil {
		t.Fatalf("setLevel: %s", r.raw)
	}
	r = rg.do(t, "POST", legacyPath, sid, call(4, "steps", `{}`))
	if len(r.msgs) != 2 || r.msgs[0]["method"] != "notifications/message" {
		t.Fatalf("log: want the log message then the result, got %s", r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"loud"}}`); r.last()["error"] == nil {
		t.Fatalf("unknown level accepted: %s", r.raw)
	}
}

// An MRTR tool reaches a 2025 client as a server→client elicitation on the
// POST's stream; the POSTed answer completes the call (with the
// requestState carried back). Without the capability: a clear error.
func TestInputRequiredAsServerRequest(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	req, _ := http.NewRequest("POST", rg.base+legacyPath, strings.NewReader(call(7, "ask_name", `{}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(legacy.HeaderSession, sid)
	resp, err := rg.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := openStream(t, resp)
	ask := s.next(t)
	if ask["method"] != "elicitation/create" || ask["id"] == nil {
		t.Fatalf("want an elicitation/create request, got %v", ask)
	}
	id, _ := json_marshal(ask["id"])
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":`+id+`,"result":{"action":"accept","content":{"name":"Ada"}}}`); r.status != 202 {
		t.Fatalf("client response: %d", r.status)
	}
	final := s.next(t)
	if got := textOf(t, final); got != `hello Ada state="s1"` {
		t.Fatalf("final: %q", got)
	}
	if rg.leg.Stats().InputRequests.Load() != 1 {
		t.Fatal("InputRequests not counted")
	}
	// A response nobody waits for is counted and dropped.
	rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":"nobody","result":{}}`)
	if rg.leg.Stats().StrayResponses.Load() != 1 {
		t.Fatal("stray response not counted")
	}
	// A session whose client did not declare elicitation.
	r := rg.do(t, "POST", legacyPath, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	sid2 := r.hdr.Get(legacy.HeaderSession)
	r = rg.do(t, "POST", legacyPath, sid2, call(8, "ask_name", `{}`))
	e, _ := r.last()["error"].(map[string]any)
	if e == nil || !strings.Contains(fmt.Sprint(e["message"]), "elicitation") {
		t.Fatalf("without the capability: %s", r.raw)
	}
}

func json_marshal(v any) (string, error) { //nolint:revive // test helper
	switch x := v.(type) {
	case string:
		return `"` + x + `"`, nil
	default:
		return fmt.Sprint(x), nil
	}
}

// notifications/cancelled from the client cancels the engine request.
func TestCancel(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	done := make(chan *reply, 1)
	go func() { done <- rg.do(t, "POST", legacyPath, sid, call(9, "wait", `{}`)) }()
	eventually(t, "the request in flight", func() bool { return rg.eng.Stats().Requests.Load() >= 2 })
	time.Sleep(20 * time.Millisecond)
	rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled request still open")
	}
	eventually(t, "Cancelled counted", func() bool { return rg.eng.Stats().Cancelled.Load() == 1 })
}

// The GET stream carries list_changed and resources/updated for the
// session's subscriptions, fed by the engine's publishing calls; one per
// session (409).
func TestGetStream(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	sid := rg.initialize(t)
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`); r.last()["result"] == nil {
		t.Fatalf("subscribe: %s", r.raw)
	}
	req, _ := http.NewRequest("GET", rg.base+legacyPath, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(legacy.HeaderSession, sid)
	resp, err := rg.client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v %v", resp, err)
	}
	s := openStream(t, resp)
	eventually(t, "the listen", func() bool { return rg.eng.Stats().ListenStreams.Load() == 1 })
	if r := rg.do(t, "GET", legacyPath, sid, ""); r.status != 409 {
		t.Fatalf("second GET: %d", r.status)
	}
	if err := rg.eng.ResourceUpdated("test://r"); err != nil {
		t.Fatal(err)
	}
	m := s.next(t)
	params, _ := m["params"].(map[string]any)
	if m["method"] != "notifications/resources/updated" || params["uri"] != "test://r" || params["_meta"] != nil {
		t.Fatalf("update: %v", m)
	}
	if err := rg.eng.ToolsChanged(); err != nil {
		t.Fatal(err)
	}
	if m := s.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("tools changed: %v", m)
	}
	// Unsubscribed: the next update of test://r does not come; a later
	// list change does (so nothing was queued in between).
	rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"test://r"}}`)
	eventually(t, "the relisten", func() bool { return rg.eng.Stats().ListenStreams.Load() == 1 })
	_ = rg.eng.ResourceUpdated("test://r")
	_ = rg.eng.ResourcesChanged()
	if m := s.next(t); m["method"] != "notifications/resources/list_changed" {
		t.Fatalf("after unsubscribe: %v", m)
	}
	// DELETE ends the stream.
	rg.do(t, "DELETE", legacyPath, sid, "")
	select {
	case _, ok := <-s.msgs:
		if ok {
			t.Fatal("event after DELETE")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GET stream open after DELETE")
	}
	eventually(t, "the listen ended", func() bool { return rg.eng.Stats().ListenStreams.Load() == 0 })
}

// A GET stream whose client stops reading is closed as a slow consumer,
// and the session goes on.
func TestSlowConsumer(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{MaxPendingBytes: 16 << 10, WriteIdleTimeout: 500 * time.Millisecond})
	sid := rg.initialize(t)
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`); r.last()["result"] == nil {
		t.Fatalf("subscribe: %s", r.raw)
	}
	c := rg.rawConn(t)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", legacyPath, sid)
	eventually(t, "the stream", func() bool { return rg.leg.Stats().Streams.Load() == 1 })
	eventually(t, "the listen", func() bool { return rg.eng.Stats().ListenStreams.Load() == 1 })
	// The stream is closed once the kernel's buffers are full and the
	// queue behind them passes MaxPendingBytes; loopback buffers grow to
	// megabytes. With list_changed notifications (about 130 bytes each,
	// a few thousand a second under -race on a loaded machine) filling
	// them took 1 to 12 s and the 8 s bound failed (seed
	// 1796583281487147984): updates of a sub-resource with a 4 KiB URI
	// fill them with 30 times fewer notifications, and the bound is
	// generous. A stream never closed still fails it.
	uri := "test://r/" + strings.Repeat("x", 4<<10)
	deadline := time.Now().Add(60 * time.Second)
	for rg.leg.Stats().Streams.Load() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("a stream that is never read stays open")
		}
		for range 20 {
			_ = rg.eng.ResourceUpdated(uri)
		}
	}
	if rg.leg.Stats().SlowConsumers.Load() != 1 {
		t.Fatalf("SlowConsumers = %d, want 1", rg.leg.Stats().SlowConsumers.Load())
	}
	eventually(t, "the listen ended", func() bool { return rg.eng.Stats().ListenStreams.Load() == 0 })
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.status != 200 {
		t.Fatalf("session after slow consumer: %d", r.status)
	}
}

// An initialize flood fills MaxSessions and no more: the rest get 503,
// counted, and established sessions go on (RELIABILITY E8).
func TestInitializeFlood(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{MaxSessions: 8})
	first := rg.initialize(t)
	for range 7 {
		rg.initialize(t)
	}
	for range 20 {
		if r := rg.do(t, "POST", legacyPath, "", initBody); r.status != 503 || r.hdr.Get("Retry-After") == "" || r.hdr.Get(legacy.HeaderSession) != "" {
			t.Fatalf("initialize past the bound: %d %v", r.status, r.hdr)
		}
	}
	if got := rg.leg.Stats().Refused.Load(); got != 20 {
		t.Fatalf("Refused = %d, want 20", got)
	}
	if got := rg.leg.Stats().Sessions.Load(); got != 8 {
		t.Fatalf("Sessions = %d, want 8", got)
	}
	if r := rg.do(t, "POST", legacyPath, first, call(2, "echo", `{"text":"still"}`)); textOf(t, r.last()) != "still" {
		t.Fatal("an established session stopped working")
	}
	rg.do(t, "DELETE", legacyPath, first, "")
	rg.initialize(t)
}

// A session nobody uses for IdleTimeout is gone (404), here and in the
// store, and counted.
func TestIdleExpiry(t *testing.T) {
	leakCheck(t)
	store := state.NewMemory(state.MemoryConfig{})
	defer store.Close()
	const idle = 500 * time.Millisecond
	rg := startRig(t, newEngine(t), legacy.Config{IdleTimeout: idle, Store: store})
	sid := rg.initialize(t)
	kept := rg.initialize(t)
	for start := time.Now(); time.Since(start) < 2*idle; { // used far more often than the timeout: stays
		time.Sleep(idle / 20)
		if r := rg.do(t, "POST", legacyPath, kept, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != 200 {
			t.Fatalf("a session in use expired: %d", r.status)
		}
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != 404 {
		t.Fatalf("idle session: %d, want 404", r.status)
	}
	if rg.leg.Stats().Expired.Load() < 1 {
		t.Fatal("expiry not counted")
	}
	if _, err := store.Get(context.Background(), "legacy", state.Handle(sid)); err == nil {
		t.Fatal("the expired session's record is still in the store")
	}
}

// Sessions live in the shared state store: a session created by one
// replica is served by another (redisstate on miniredis), and a DELETE on
// either ends it for both.
func TestSessionsAcrossReplicas(t *testing.T) {
	leakCheck(t)
	mr := miniredis.RunT(t)
	open := func() *redisstate.Store {
		st, err := redisstate.New(context.Background(), "redis://"+mr.Addr()+"/0", redisstate.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a := startRig(t, newEngine(t), legacy.Config{Store: open()})
	b := startRig(t, newEngine(t), legacy.Config{Store: open()})
	sid := a.initialize(t)
	if r := b.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"on b"}`)); textOf(t, r.last()) != "on b" {
		t.Fatalf("replica b: %s", r.raw)
	}
	// The log level set on b is the session's, so a sees it too.
	b.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}`)
	// a refreshes its copy at most every IdleTimeout/4; a fresh lookup on a
	// third replica reads the store.
	c := startRig(t, newEngine(t), legacy.Config{Store: open()})
	if r := c.do(t, "POST", legacyPath, sid, call(4, "steps", `{}`)); len(r.msgs) != 2 || r.msgs[0]["method"] != "notifications/message" {
		t.Fatalf("log level not shared through the store: %s", r.raw)
	}
	if r := b.do(t, "DELETE", legacyPath, sid, ""); r.status != 200 {
		t.Fatalf("DELETE on b: %d", r.status)
	}
	if r := c.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.status != 404 {
		t.Fatalf("after DELETE on b, c: %d", r.status)
	}
}

// With authentication on the listener, the legacy path is authenticated
// too (401 without a token), and a session is bound to the principal that
// created it: another principal presenting its id gets 404 (E3).
func TestSessionsBoundToPrincipal(t *testing.T) {
	leakCheck(t)
	auth := func(_ context.Context, token string) (any, error) {
		if token == "" {
			return nil, streamhttp.ErrUnauthorized
		}
		return token, nil
	}
	rg := startRigHTTP(t, newEngine(t), legacy.Config{Principal: streamhttp.PrincipalFrom}, streamhttp.Config{Authenticate: auth})
	if r := rg.do(t, "POST", legacyPath, "", initBody); r.status != 401 || r.hdr.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %d %v", r.status, r.hdr)
	}
	r := rg.do(t, "POST", legacyPath, "", initBody, "Authorization: Bearer alice")
	sid := r.hdr.Get(legacy.HeaderSession)
	if r.status != 200 || sid == "" {
		t.Fatalf("alice initialize: %d %s", r.status, r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "Authorization: Bearer alice"); r.status != 200 {
		t.Fatalf("alice ping: %d", r.status)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, "Authorization: Bearer mallory"); r.status != 404 {
		t.Fatalf("mallory with alice's session: %d, want 404", r.status)
	}
	if r := rg.do(t, "DELETE", legacyPath, sid, "", "Authorization: Bearer mallory"); r.status != 404 {
		t.Fatalf("mallory DELETE of alice's session: %d, want 404", r.status)
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, "Authorization: Bearer alice"); r.status != 200 {
		t.Fatalf("alice after mallory's attempts: %d", r.status)
	}
}

// When the engine refuses the GET stream's listen (here: a backplane that
// was never started, as after a lost Redis), the stream ends at once, so
// the client opens it again later; the session goes on.
func TestGetStreamRefused(t *testing.T) {
	leakCheck(t)
	bus := state.NewMemory(state.MemoryConfig{})
	defer bus.Close()
	eng := newEngineWith(t, bus)
	rg := startRig(t, eng, legacy.Config{})
	sid := rg.initialize(t)
	done := make(chan *reply, 1)
	go func() { done <- rg.do(t, "GET", legacyPath, sid, "") }()
	select {
	case r := <-done:
		if r.status != 200 || len(r.msgs) != 0 {
			t.Fatalf("refused stream: %d %s", r.status, r.raw)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("a GET stream whose listen was refused stays open")
	}
	if eng.Stats().ListenRefused.Load() == 0 {
		t.Fatal("the engine did not refuse the listen")
	}
	if r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); r.status != 200 {
		t.Fatalf("session after a refused stream: %d", r.status)
	}
}

// TestDurationsLabelledLegacy: a request on the 2025-11-25 endpoint is
// recorded in the engine's duration histograms under transport "legacy",
// not "other" (mcpwire_request_duration_seconds{transport="legacy"};
// issue 20).
func TestDurationsLabelledLegacy(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	r := rg.do(t, "POST", legacyPath, "", initBody)
	sid := r.hdr.Get(legacy.HeaderSession)
	if r = rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{"text":"hi"}`)); r.status != 200 {
		t.Fatalf("tools/call: %d %s", r.status, r.raw)
	}
	got := map[string]uint64{}
	rg.eng.RequestDurations(func(h *engine.DurationHistogram) {
		if h.Method == "tools/call" {
			got[h.Transport] += h.Count
		}
	})
	if got["legacy"] != 1 || got["other"] != 0 {
		t.Fatalf("tools/call durations by transport: %v, want legacy:1", got)
	}
}

// TestDuplicateHeaders (F2): two lines of a header the endpoint reads
// (Mcp-Session-Id, MCP-Protocol-Version, Content-Type) are refused with
// 400 and a -32600 naming it, mounted on the fasthttp front end and served
// by net/http on its own, and counted; the mount also refuses two Origin
// lines, as streamhttp does on every path.
func TestDuplicateHeaders(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{})
	standalone := legacy.New(newEngine(t), legacy.Config{})
	t.Cleanup(func() { _ = standalone.Shutdown(context.Background()) })
	for _, tc := range []struct{ name, a, b string }{
		{legacy.HeaderSession, "s1", "s2"},
		{legacy.HeaderProtocol, "2025-11-25", "2025-03-26"},
		{"Content-Type", "application/json", "text/plain"},
	} {
		want := "Bad Request: more than one " + tc.name + " header"
		check := func(where string, status int, body []byte) {
			t.Helper()
			var m struct {
				Error struct {
					Code    int
					Message string
				}
			}
			if err := json.Unmarshal(body, &m); status != 400 || err != nil || m.Error.Code != -32600 || m.Error.Message != want {
				t.Errorf("%s, two %s lines: %d %s, want 400 -32600 %q", where, tc.name, status, body, want)
			}
		}
		// Mounted on the fasthttp front end.
		before := rg.leg.Stats().DuplicateHeaders.Load()
		req, _ := http.NewRequest("POST", rg.base+legacyPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.name != "Content-Type" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Add(tc.name, tc.a)
		req.Header.Add(tc.name, tc.b)
		resp, err := rg.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.name == "Content-Type" {
			// streamhttp's mount check answers first, the same way.
			if m := (struct{ Error struct{ Message string } }{}); resp.StatusCode != 400 || json.Unmarshal(body, &m) != nil || m.Error.Message != want {
				t.Errorf("mounted, two Content-Type lines: %d %s", resp.StatusCode, body)
			}
		} else {
			check("mounted", resp.StatusCode, body)
			if got := rg.leg.Stats().DuplicateHeaders.Load() - before; got != 1 {
				t.Errorf("mounted, two %s lines: counted %d, want 1", tc.name, got)
			}
		}
		// Served by net/http alone.
		before = standalone.Stats().DuplicateHeaders.Load()
		rr := httptest.NewRecorder()
		hreq := httptest.NewRequest("POST", legacyPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header[tc.name] = []string{tc.a, tc.b}
		standalone.Handler().ServeHTTP(rr, hreq)
		check("net/http", rr.Code, rr.Body.Bytes())
		if got := standalone.Stats().DuplicateHeaders.Load() - before; got != 1 {
			t.Errorf("net/http, two %s lines: counted %d, want 1", tc.name, got)
		}
	}
	resp := rg.do(t, "POST", legacyPath, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Origin: http://evil.example")
	if resp.status != 403 {
		t.Errorf("one foreign Origin: %d", resp.status)
	}
	req, _ := http.NewRequest("POST", rg.base+legacyPath, strings.NewReader(`{}`))
	req.Header["Origin"] = []string{"http://evil.example", rg.base}
	if r, err := rg.client.Do(req); err != nil || r.StatusCode != 400 {
		t.Errorf("two Origin lines: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}

// A subscription change served by another replica reaches the replica
// holding the session's GET stream through the backplane, without waiting
// for the next keep-alive tick (here a minute away): updates of the newly
// subscribed resource then reach the stream (F9). The private cue never
// reaches the client.
func TestGetStreamFollowsOtherReplica(t *testing.T) {
	leakCheck(t)
	mr := miniredis.RunT(t)
	open := func() *redisstate.Store {
		st, err := redisstate.New(context.Background(), "redis://"+mr.Addr()+"/0", redisstate.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	replica := func() *rig {
		st := open()
		eng := newEngineWith(t, st)
		if err := eng.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return startRig(t, eng, legacy.Config{Store: st, KeepAlive: time.Minute})
	}
	a, b := replica(), replica()
	sid := a.initialize(t)
	req, _ := http.NewRequest("GET", a.base+legacyPath, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(legacy.HeaderSession, sid)
	resp, err := a.client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v %v", resp, err)
	}
	s := openStream(t, resp)
	eventually(t, "the listen", func() bool { return a.eng.Stats().ListenStreams.Load() == 1 })
	if r := b.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"test://r"}}`); r.last()["result"] == nil {
		t.Fatalf("subscribe on b: %s", r.raw)
	}
	got := make(chan map[string]any, 1)
	go func() {
		select {
		case m, ok := <-s.msgs:
			if ok {
				got <- m
			}
		case <-time.After(5 * time.Second):
		}
		close(got)
	}()
	deadline := time.Now().Add(5 * time.Second)
	var m map[string]any
	for m == nil && time.Now().Before(deadline) {
		if err := b.eng.ResourceUpdated("test://r"); err != nil {
			t.Fatal(err)
		}
		select {
		case m = <-got:
		case <-time.After(50 * time.Millisecond):
		}
	}
	params, _ := m["params"].(map[string]any)
	if m["method"] != "notifications/resources/updated" || params["uri"] != "test://r" {
		t.Fatalf("the GET stream on a did not follow b's subscribe: first event %v", m)
	}
	if a.leg.Stats().Resyncs.Load() == 0 {
		t.Fatal("Stats.Resyncs not counted")
	}
}

// lostStore is a store that, once lost is set, has just lost its data:
// every lookup misses with state.ErrLost.
type lostStore struct {
	*state.Memory
	lost *atomic.Bool
}

func (l lostStore) Get(ctx context.Context, p string, h state.Handle) (state.Record, error) {
	if l.lost.Load() {
		return state.Record{}, state.ErrLost
	}
	return l.Memory.Get(ctx, p, h)
}

// A session lookup that misses just after the store lost its data is a
// 503 saying so, not 404 "Session not found" as for a wrong id (F9).
func TestSessionLostInRestart(t *testing.T) {
	leakCheck(t)
	m := state.NewMemory(state.MemoryConfig{})
	t.Cleanup(func() { m.Close() })
	var lost atomic.Bool
	rg := startRig(t, newEngine(t), legacy.Config{Store: lostStore{m, &lost}})
	sid := rg.initialize(t)
	lost.Store(true)
	r := rg.do(t, "POST", legacyPath, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r.status != 503 || !strings.Contains(r.raw, "lost its data") {
		t.Fatalf("lookup after a loss: %d %s", r.status, r.raw)
	}
}
