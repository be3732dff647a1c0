package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// TestErrorsByKind runs a mix whose every method fails differently and
// checks each failure is counted once under its kind, with the goroutine
// client and with the relay.
func TestErrorsByKind(t *testing.T) {
	t.Run("goroutine", testErrorsByKind)
	t.Run("relay", func(t *testing.T) {
		if !canPoll {
			t.Skip("no poller")
		}
		defer func(n int) { httpRelayMinConns = n }(httpRelayMinConns)
		httpRelayMinConns = 1
		testErrorsByKind(t)
	})
}

func testErrorsByKind(t *testing.T) {
	f := startHTTPFake(t, func(w http.ResponseWriter, req *http.Request, m *rpcMsg) {
		switch m.Method {
		case "server/discover":
			writeJSON(w, 200, resultJSON(m.ID, "ok"))
		case "tools/list":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("busy"))
		case "prompts/list":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("<html>oops</html>"))
		case "ping":
			writeJSON(w, http.StatusNotFound, errorJSON(m.ID, -32601))
		case "resources/list":
			writeJSON(w, 200, errorJSON(m.ID, -32602))
		case "tools/call":
			// An SSE response whose final result is a tool error.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			sseEvent(w, []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`))
			sseEvent(w, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[],"isError":true}}`, m.ID))
		case "slow/op":
			select {
			case <-time.After(2 * time.Second):
			case <-req.Context().Done():
			}
			writeJSON(w, 200, resultJSON(m.ID, "late"))
		}
	})
	res := runLoad(t, Config{
		Target:   f.url(),
		Workload: WorkloadMix,
		Mix:      "server/discover=1,tools/list=1,prompts/list=1,ping=1,resources/list=1,tools/call=1,slow/op=1",
		Conns:    1,
		Requests: 14, // two cycles of the mix
		Timeout:  200 * time.Millisecond,
	})
	if bad := f.mismatches(); len(bad) > 0 {
		t.Fatalf("header/body mismatches: %v", bad)
	}
	want := map[string]int64{
		"http_503":   2,
		"http_500":   2,
		"rpc_-32601": 2, // 404 with a JSON-RPC body: counted by its code
		"rpc_-32602": 2, // an in-band error on 200
		"tool_error": 2,
		"timeout":    2,
	}
	if !reflect.DeepEqual(res.Errors, want) {
		t.Errorf("errors = %v, want %v", res.Errors, want)
	}
	if res.Requests != 14 {
		t.Errorf("requests = %d, want 14", res.Requests)
	}
	// Timeouts carry no latency; the 12 answered requests do.
	if res.LatencyUs.Max >= 200_000 {
		t.Errorf("max latency %d µs includes a timed-out request", res.LatencyUs.Max)
	}
}

// TestConnectFailure reports an unreachable target at once.
func TestConnectFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, target := range []string{"http://" + addr + "/mcp", "tcp://" + addr} {
		for _, conns := range []int{1, 2} { // HTTP: the goroutine client and the relay
			_, err := Run(context.Background(), Config{Target: target, Conns: conns, Requests: 1, Timeout: time.Second})
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("%s, %d connections: err = %v, want connection refused", target, conns, err)
			}
		}
	}
}

// TestHTTPMirrorsParamHeaders checks that tools/call mirrors the arguments
// the tool annotates with x-mcp-header (found through a paginated
// tools/list) into Mcp-Param-* headers, Base64-encoding non-ASCII values.
func TestHTTPMirrorsParamHeaders(t *testing.T) {
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
		`"opts":{"type":"object","properties":{"priority":{"type":"integer","x-mcp-header":"Priority"},"dry":{"type":"boolean","x-mcp-header":"DryRun"}}},` +
		`"missing":{"type":"string","x-mcp-header":"Missing"},"query":{"type":"string"}}}`
	f := startHTTPFake(t, func(w http.ResponseWriter, req *http.Request, m *rpcMsg) {
		switch m.Method {
		case "tools/list":
			// Page 1 lists another tool and a cursor; page 2 the one called.
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"other","inputSchema":{"type":"object"}}],"nextCursor":"p2","ttlMs":0,"cacheScope":"public"}}`, m.ID)
			if m.Params.Cursor == "p2" {
				body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"execute_sql","inputSchema":%s}],"ttlMs":0,"cacheScope":"public"}}`, m.ID, schema)
			}
			writeJSON(w, 200, []byte(body))
		case "tools/call":
			want := map[string]string{
				"Mcp-Param-Region":   "=?base64?WsO8cmljaA==?=",
				"Mcp-Param-Priority": "42",
				"Mcp-Param-Dryrun":   "false",
			}
			for h, v := range want {
				if got := req.Header.Get(h); got != v {
					writeJSON(w, 400, errorJSON(m.ID, -32020))
					t.Errorf("%s = %q, want %q", h, got, v)
					return
				}
			}
			if _, ok := req.Header["Mcp-Param-Missing"]; ok {
				t.Errorf("header for an absent argument")
			}
			writeJSON(w, 200, resultJSON(m.ID, "1 row"))
		}
	})
	res := runLoad(t, Config{
		Target: f.url(), Tool: "execute_sql", Conns: 2, Requests: 20,
		Args: `{"region":"Zürich","opts":{"priority":42,"dry":false},"query":"SELECT 1"}`,
	})
	if len(res.Errors) != 0 || res.Requests != 20 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
}

// TestTemplates checks the prebuilt requests: valid JSON-RPC with the id
// spliced in, the required _meta keys, the progress token equal to the id,
// and HTTP heads carrying the mirrored headers with the right length.
func TestTemplates(t *testing.T) {
	tg, err := parseTarget("http://127.0.0.1:8080/mcp?x=1")
	if err != nil {
		t.Fatal(err)
	}
	call := newTemplate("tools/call", callParams("héllo tool", []byte(`{"text":"a b"}`)), false)
	name := "héllo tool"
	call.head = httpHead(tg, "tools/call", &name, []header{{"Mcp-Param-X", "1"}})
	prog := newTemplate("tools/call", callParams("sleep", []byte(`{"ms":1}`)), true)
	list := newTemplate("tools/list", nil, false)
	for _, tc := range []struct {
		tpl  *reqTemplate
		id   string
		tok  bool
		meth string
	}{{call, "7", false, "tools/call"}, {prog, "123456789", true, "tools/call"}, {list, "1", false, "tools/list"}} {
		body := tc.tpl.appendBody(nil, []byte(tc.id))
		if len(body) != tc.tpl.bodyLen(len(tc.id), len(tc.id)) {
			t.Errorf("bodyLen %d != %d", tc.tpl.bodyLen(len(tc.id), len(tc.id)), len(body))
		}
		var env codec.Envelope
		if err := codec.Peek(body, &env); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if string(env.ID) != tc.id || env.Kind != codec.KindRequest || !env.Method.EqualString(tc.meth) {
			t.Errorf("%s: id %s kind %v method %s", body, env.ID, env.Kind, env.Method)
		}
		if !env.ProtocolVersion.EqualString("2026-07-28") || string(env.ClientCapabilities) != "{}" {
			t.Errorf("%s: _meta incomplete", body)
		}
		if tc.tok != (string(env.ProgressToken) == tc.id) {
			t.Errorf("%s: progressToken %s", body, env.ProgressToken)
		}
		if !json.Valid(body) {
			t.Errorf("invalid JSON %s", body)
		}
	}
	req := string(call.appendHTTP(nil, []byte("42")))
	head, body, _ := strings.Cut(req, "\r\n\r\n")
	for _, h := range []string{
		"POST /mcp?x=1 HTTP/1.1", "Host: 127.0.0.1:8080", "MCP-Protocol-Version: 2026-07-28",
		"Mcp-Method: tools/call", "Mcp-Name: =?base64?aMOpbGxvIHRvb2w=?=", "Mcp-Param-X: 1",
		"Accept: application/json, text/event-stream", "Content-Type: application/json",
		fmt.Sprintf("Content-Length: %d", len(body)),
	} {
		if !strings.Contains(head+"\r\n", h+"\r\n") {
			t.Errorf("request head lacks %q:\n%s", h, head)
		}
	}
}
