package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func newConn(t *testing.T, opt engine.Config) (*engine.Server, *streamConn, *sink) {
	t.Helper()
	leakCheck(t)
	s := testServer(t, opt)
	out := newSink()
	sc := newStreamConn(s, out)
	t.Cleanup(sc.Close)
	return s, sc, out
}

func feed(t *testing.T, sc *streamConn, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if err := sc.HandleFrame([]byte(l)); err != nil {
			t.Fatalf("HandleFrame(%s): %v", l, err)
		}
	}
}

func TestDiscover(t *testing.T) { // DISC-02, META-06, CACHE
	_, sc, out := newConn(t, engine.Config{Name: "srv", Version: "9"})
	feed(t, sc, req(1, "server/discover", ""))
	m := out.response(t, "1")
	var r struct {
		ResultType        string          `json:"resultType"`
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      map[string]any  `json:"capabilities"`
		TTL               *int            `json:"ttlMs"`
		Scope             string          `json:"cacheScope"`
		Meta              json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.ResultType != "complete" || len(r.SupportedVersions) != 1 || r.SupportedVersions[0] != "2026-07-28" {
		t.Fatalf("bad discover result %s", m.Result)
	}
	if r.TTL == nil || *r.TTL != 60000 || r.Scope != "public" {
		t.Fatalf("cache hints missing: %s", m.Result)
	}
	if _, ok := r.Capabilities["tools"]; !ok {
		t.Fatalf("tools capability missing: %s", m.Result)
	}
	if _, ok := r.Capabilities["prompts"]; ok {
		t.Fatalf("prompts capability advertised without prompts: %s", m.Result)
	}
	if string(r.Meta) != `{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"9"}}` {
		t.Fatalf("serverInfo: %s", r.Meta)
	}
}

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name     string
		line     string
		id       string // raw id expected in the error, "" = none
		code     int
		data     string // substring expected in error.data
		wantNone bool   // no reply expected
	}{
		// META-03: missing keys, also when an earlier request on the same
		// connection carried them (GEN-11).
		{"missing _meta", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{}}`, "10", -32602, "", false},
		{"no params", `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`, "11", -32602, "", false},
		{"missing caps", `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "12", -32602, "", false},
		// DISC-04
		{"unsupported version", strings.Replace(req(13, "tools/list", ""), "2026-07-28", "2099-01-01", 1), "13", -32022, `"requested":"2099-01-01"`, false},
		// DISC-05 (our choice): legacy initialize names the served versions.
		{"legacy initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"L","version":"1"}}}`, "0", -32022, `"supported":["2026-07-28"],"requested":"2025-11-25"`, false},
		{"modern initialize", req(14, "initialize", ""), "14", -32601, "", false},
		{"ping removed", req(15, "ping", ""), "15", -32601, "", false},
		{"logging/setLevel removed", req(16, "logging/setLevel", `"level":"info"`), "16", -32601, "", false},
		{"resources/subscribe removed", req(17, "resources/subscribe", `"uri":"x"`), "17", -32601, "", false},
		{"resources/unsubscribe removed", req(18, "resources/unsubscribe", `"uri":"x"`), "18", -32601, "", false},
		{"unknown method", req("u", "foo/bar", ""), `"u"`, -32601, "", false},
		{"gated method (no prompts)", req(19, "prompts/list", ""), "19", -32601, "", false},
		{"unknown tool", req(20, "tools/call", `"name":"nope","arguments":{}`), "20", -32602, "", false},
		{"tools/call without name", req(21, "tools/call", `"arguments":{}`), "21", -32602, "", false},
		// META-08
		{"missing client capability", req(22, "tools/call", `"name":"sample","arguments":{}`), "22", -32021, `{"requiredCapabilities":{"sampling":{}}}`, false},
		{"bad cursor", req(23, "tools/list", `"cursor":"abc"`), "23", -32602, "", false},
		{"bad log level", strings.Replace(req(24, "tools/list", ""), `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"`, 1), "24", -32602, "", false},
		// A7, A8, A9, A10, A11, A12 through the connection
		{"not JSON", `hello`, "", -32700, "", false},
		{"truncated", `{"jsonrpc":"2.0",`, "", -32700, "", false},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\xfe\"}}", "", -32700, "", false},
		{"too deep", `{"jsonrpc":"2.0","id":31,"method":"tools/list","params":{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`, "31", -32600, "", false},
		{"case variant key", `{"jsonrpc":"2.0","id":32,"method":"tools/list","Method":"tools/call","params":{` + testMeta + `}}`, "32", -32600, "", false},
		{"batch", `[` + req(33, "tools/list", "") + `]`, "", -32600, "", false},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{` + testMeta + `}}`, "", -32600, "", false},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{` + testMeta + `}}`, "", -32600, "", false},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":34,"method":"tools/list","params":{` + testMeta + `}}`, "34", -32600, "", false},
		{"missing method", `{"jsonrpc":"2.0","id":35,"params":{}}`, "35", -32600, "", false},
		{"params null", `{"jsonrpc":"2.0","id":36,"method":"tools/list","params":null}`, "36", -32600, "", false},
		// GEN-07: notifications are never answered.
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/whatever"}`, "", 0, "", true},
		{"response from client", `{"jsonrpc":"2.0","id":99,"result":{}}`, "", 0, "", true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, sc, out := newConn(t, engine.Config{})
			// A well-formed request before the bad one: its _meta must not be
			// carried over (META-03, GEN-11).
			feed(t, sc, req("warm", "tools/list", ""))
			out.response(t, `"warm"`)
			feed(t, sc, tc.line)
			// A well-formed request after the bad one is still served.
			feed(t, sc, req("after", "tools/list", ""))
			out.response(t, `"after"`)
			frames := out.all()
			if tc.wantNone {
				if len(frames) != 2 {
					t.Fatalf("case %d: expected no reply, got %v", i, frames)
				}
				return
			}
			if len(frames) != 3 {
				t.Fatalf("case %d: want 3 frames, got %v", i, frames)
			}
			m := decode(t, frames[1])
			if m.code() != tc.code {
				t.Fatalf("case %d: code %d, want %d: %s", i, m.code(), tc.code, m.raw)
			}
			if string(m.ID) != tc.id {
				t.Fatalf("case %d: id %s, want %q: %s", i, m.ID, tc.id, m.raw)
			}
			if tc.id == "" && strings.Contains(m.raw, `"id"`) {
				t.Fatalf("case %d: error without a readable id must omit the member (GEN-05): %s", i, m.raw)
			}
			if tc.data != "" && !strings.Contains(string(m.Error.Data), tc.data) {
				t.Fatalf("case %d: data %s lacks %s", i, m.Error.Data, tc.data)
			}
		})
	}
}

func TestEchoAndToolErrors(t *testing.T) {
	s, sc, out := newConn(t, engine.Config{})
	feed(t, sc,
		req(1, "tools/call", `"name":"echo","arguments":{"text":"h\u00e9llo \"q\" \n"}`),
		req(2, "tools/call", `"name":"fail","arguments":{}`),
		req(3, "tools/call", `"name":"panic","arguments":{}`),
		req(4, "tools/call", `"name":"badutf8","arguments":{}`),
		req(5, "tools/call", `"name":"nothing","arguments":{}`),
		req(6, "tools/call", `"name":"echo","arguments":{"text":"after panic"}`),
	)
	if got := out.response(t, "1").text(); got != "héllo \"q\" \n" {
		t.Fatalf("echo: %q", got)
	}
	m := out.response(t, "2")
	if !strings.Contains(string(m.Result), `"isError":true`) || m.text() != "disk on fire" {
		t.Fatalf("tool error must be an isError result: %s", m.raw)
	}
	m = out.response(t, "3") // C12
	if m.code() != -32603 || strings.Contains(m.Error.Message, "map") || strings.Contains(m.Error.Message, ".go") {
		t.Fatalf("panic must be a generic -32603: %s", m.raw)
	}
	if s.Stats().Panics.Load() != 1 {
		t.Fatalf("panic not counted")
	}
	m = out.response(t, "4") // A17
	if !utf8.ValidString(m.raw) || !strings.Contains(m.text(), "\uFFFD") {
		t.Fatalf("invalid UTF-8 from a handler must be replaced: %q", m.raw)
	}
	if m = out.response(t, "5"); m.code() != -32603 {
		t.Fatalf("a handler that sets no result: %s", m.raw)
	}
	if out.response(t, "6").text() != "after panic" {
		t.Fatal("server did not go on after a panic")
	}
}

func TestCancellation(t *testing.T) { // STD-10, C7, CAN-04
	s, sc, out := newConn(t, engine.Config{})
	feed(t, sc, req(7, "tools/call", `"name":"block","arguments":{}`))
	waitFor(t, "in flight", func() bool { return sc.InFlight() == 1 })
	feed(t, sc,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`, // unknown: ignored
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`,   // string "7" is another id
	)
	waitFor(t, "cancelled call to end", func() bool { return sc.InFlight() == 0 })
	feed(t, sc, req(8, "tools/call", `"name":"echo","arguments":{"text":"x"}`))
	out.response(t, "8")
	for _, f := range out.all() {
		if m := decode(t, f); string(m.ID) == "7" {
			t.Fatalf("a response was sent for the cancelled request: %s", f)
		}
	}
	if s.Stats().Cancelled.Load() != 1 || s.Stats().UnknownCancels.Load() != 2 {
		t.Fatalf("counters: cancelled %d unknown %d", s.Stats().Cancelled.Load(), s.Stats().UnknownCancels.Load())
	}
	// The id can be reused once the request is over.
	feed(t, sc, req(7, "tools/call", `"name":"echo","arguments":{"text":"again"}`))
	if out.response(t, "7").text() != "again" {
		t.Fatal("id reuse after completion")
	}
}

func TestDuplicateInFlightID(t *testing.T) { // GEN-04
	_, sc, out := newConn(t, engine.Config{})
	feed(t, sc, req(1, "tools/call", `"name":"block","arguments":{}`))
	waitFor(t, "in flight", func() bool { return sc.InFlight() == 1 })
	feed(t, sc, req(1, "tools/call", `"name":"echo","arguments":{"text":"dup"}`))
	m := out.response(t, "1")
	if m.code() != -32600 {
		t.Fatalf("duplicate id: %s", m.raw)
	}
	sc.CancelAll(errors.New("test over"))
}

func TestMaxInFlightStopsReading(t *testing.T) { // A19
	s, sc, out := newConn(t, engine.Config{MaxInFlight: 2})
	feed(t, sc, req(1, "tools/call", `"name":"block","arguments":{}`), req(2, "tools/call", `"name":"block","arguments":{}`))
	third := make(chan error, 1)
	go func() {
		third <- sc.HandleFrame([]byte(req(3, "tools/call", `"name":"echo","arguments":{"text":"3"}`)))
	}()
	select {
	case <-third:
		t.Fatal("HandleFrame returned while MaxInFlight requests were in flight")
	case <-time.After(100 * time.Millisecond):
	}
	// The reader is blocked, so the cancellation arrives out of band here.
	sc.cancel([]byte("1"))
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	if out.response(t, "3").text() != "3" {
		t.Fatal("third request not served")
	}
	if s.Stats().InFlightStalls.Load() == 0 {
		t.Fatal("stall not counted")
	}
	sc.CancelAll(errors.New("test over"))
}

func TestShutdownReturnsByDeadline(t *testing.T) { // C13
	leakCheck(t)
	s := testServer(t, engine.Config{})
	out := newSink()
	sc := newStreamConn(s, out)
	defer sc.Close()
	feed(t, sc, req(1, "tools/call", `"name":"stuck","arguments":{}`))
	waitFor(t, "in flight", func() bool { return sc.InFlight() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := s.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	// engine.New requests are refused once shutting down.
	feed(t, sc, req(2, "tools/call", `"name":"echo","arguments":{"text":"x"}`))
	if out.response(t, "2").code() != -32603 {
		t.Fatal("request accepted after Shutdown")
	}
	// The stuck handler eventually returns; nothing is written for it
	// (cancelled at the deadline).
	waitFor(t, "stuck handler to end", func() bool { return sc.InFlight() == 0 })
	for _, f := range out.all() {
		if strings.Contains(f, "late") {
			t.Fatalf("response after cancellation: %s", f)
		}
	}
}

func TestWriteFailureEndsConnection(t *testing.T) { // A16
	_, sc, out := newConn(t, engine.Config{})
	feed(t, sc, req(1, "tools/call", `"name":"block","arguments":{}`))
	waitFor(t, "in flight", func() bool { return sc.InFlight() == 1 })
	out.mu.Lock()
	out.err = errors.New("broken pipe")
	out.mu.Unlock()
	if err := sc.HandleFrame([]byte(req(2, "tools/list", ""))); err == nil {
		t.Fatal("HandleFrame must report the dead output")
	}
	// The driver was asked to end the connection; closing it cancels what
	// is in flight.
	select {
	case <-sc.aborted:
	default:
		t.Fatal("Driver.Abort not called after the output failed")
	}
	sc.Close()
	waitFor(t, "in-flight cancelled", func() bool { return sc.InFlight() == 0 })
	if err := sc.HandleFrame([]byte(req(3, "tools/list", ""))); err == nil {
		t.Fatal("connection must stay failed")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
