// Package migration_test keeps MIGRATION.md's mcpwire snippets honest: the
// same code, compiled against the real APIs and run over the net/http
// adapter — a tool, a handle-based draft, an MRTR tool asked once and
// retried, and the legacy endpoint mounted beside the modern one.
package migration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

var nameSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"name": map[string]any{"type": "string"}},
	"required":   []string{"name"},
}

// principal is the guide's helper: the authenticated caller as a stable
// string, one fixed value without authentication.
func principal(c *engine.Call) string {
	if p, ok := c.Principal().(string); ok {
		return p
	}
	return "anonymous"
}

// newServer registers the guide's tools: echo ("A tool, side by side"),
// draft_create ("Sessions become explicit state handles") and greet
// ("Server-to-client requests become MRTR").
func newServer(t *testing.T, store state.Store) *engine.Server {
	t.Helper()
	srv := engine.New(engine.Config{Name: "notes", Version: "1.0.0"})
	err := srv.AddTool(engine.Tool{
		Name:        "echo",
		Description: "Returns its text",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: func(c *engine.Call) error {
			var in struct {
				Text string `json:"text"`
			}
			if err := c.Bind(&in); err != nil {
				return err
			}
			c.Text(in.Text)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.AddTool(engine.Tool{
		Name:         "draft_create",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"handle":{"type":"string"}},"required":["handle"]}`),
		Handler: func(c *engine.Call) error {
			text, _ := c.ArgString("text")
			h, err := store.Create(c, principal(c), []byte(text), time.Hour)
			if err != nil {
				return err
			}
			return c.Return(mcp.ToolResult{
				Content:           []mcp.Content{mcp.TextContent(string(h))},
				StructuredContent: map[string]any{"handle": string(h)},
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// "Server-to-client requests become MRTR", keyFile "" (no
	// MCPWIRE_STATE_KEYS in a test: a random key).
	keys, err := mrtr.LoadKeys("", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := mrtr.NewSigner(mrtr.Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.AddTool(engine.Tool{
		Name: "greet",
		// refused with -32021 before the handler runs when this request's
		// clientCapabilities lack elicitation (META-08); or test
		// mrtr.Allowed(c, req) and degrade.
		RequiredClientCapabilities: []string{"elicitation"},
		Handler: func(c *engine.Call) error {
			// A retry's requestState must verify: signed by the fleet, not
			// expired, issued to this caller for this tool and these
			// arguments (SEC-07). Anything else is -32602.
			_, resumed, err := signer.Verify(c)
			if err != nil {
				return err
			}
			in, err := mrtr.Responses(c)
			if err != nil {
				return err
			}
			answer, err := in.Elicit("user_name")
			if !resumed || errors.Is(err, mrtr.ErrResponseMissing) {
				// The first round, or a retry without the answer (MRTR-11):
				// ask, with a state for the retry to bring back.
				return signer.Ask(c, map[string]mcp.InputRequest{
					"user_name": mrtr.Elicit("What is your name?", nameSchema),
				}, nil)
			}
			if err != nil {
				return err // not an elicitation result: -32602
			}
			if name, _ := answer.String("name"); answer.Accepted() && name != "" {
				c.Text("Hello, " + name + "!")
			} else {
				c.Text("No name was given (" + answer.Action + ").")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// serve runs srv on the net/http adapter with the legacy endpoint mounted
// at /mcp-2025, as the guide's "Keeping 2025-11-25 clients" shows; it
// returns the base URL.
func serve(t *testing.T, srv *engine.Server, store state.Store) string {
	t.Helper()
	ls := legacy.New(srv, legacy.Config{Store: store, Principal: streamhttp.PrincipalFrom})
	hs := streamhttp.New(srv, streamhttp.Config{
		Mounts: map[string]http.Handler{"/mcp-2025": ls.Handler()},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := hs.Handler(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ls.Shutdown(ctx)
		_ = hs.Shutdown(ctx)
		_ = server.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

// post sends one JSON-RPC message with the headers of its era and returns
// the status, the Mcp-Session-Id answered and the parsed body.
func post(t *testing.T, url string, hdr map[string]string, msg string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("reply %q: %v", body, err)
		}
	}
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), out
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// call is a 2026-07-28 tools/call; extra is spliced into params.
func call(t *testing.T, base, name, args, extra string) map[string]any {
	t.Helper()
	status, sid, out := post(t, base+"/mcp", map[string]string{
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
	}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+extra+`,`+meta+`}}`)
	if status != 200 || sid != "" {
		t.Fatalf("tools/call %s: HTTP %d, Mcp-Session-Id %q (modern: none)", name, status, sid)
	}
	res, ok := out["result"].(map[string]any)
	if !ok {
		t.Fatalf("tools/call %s: no result in %v", name, out)
	}
	return res
}

// callError is call for a tools/call answered with a JSON-RPC error.
func callError(t *testing.T, base, name, args, extra string) (e struct {
	Code    int
	Message string
}) {
	t.Helper()
	status, _, out := post(t, base+"/mcp", map[string]string{
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
	}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+extra+`,`+meta+`}}`)
	m, ok := out["error"].(map[string]any)
	if status != 200 || !ok {
		t.Fatalf("tools/call %s: HTTP %d, want an error in %v", name, status, out)
	}
	code, _ := m["code"].(float64)
	e.Code = int(code)
	e.Message, _ = m["message"].(string)
	return e
}

func text(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("want one content block, got %v", res)
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

func TestSnippets(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	store := state.NewMemory(state.MemoryConfig{})
	t.Cleanup(func() { _ = store.Close() })
	base := serve(t, newServer(t, store), store)

	if got := text(t, call(t, base, "echo", `{"text":"héllo"}`, "")); got != "héllo" {
		t.Errorf("echo: %q", got)
	}

	res := call(t, base, "draft_create", `{"text":"first line"}`, "")
	h, _ := res["structuredContent"].(map[string]any)["handle"].(string)
	if !state.Handle(h).Valid() || text(t, res) != h {
		t.Errorf("draft_create: handle %q, result %v", h, res)
	}
	if rec, err := store.Get(context.Background(), "anonymous", state.Handle(h)); err != nil || string(rec.Value) != "first line" {
		t.Errorf("the draft in the store: %q, %v", rec.Value, err)
	}

	// MRTR: asked once, then retried with the answer (MRTR-01, MRTR-05).
	res = call(t, base, "greet", `{}`, "")
	if res["resultType"] != "input_required" {
		t.Fatalf("greet: resultType %v, want input_required (%v)", res["resultType"], res)
	}
	ask, _ := res["inputRequests"].(map[string]any)["user_name"].(map[string]any)
	if ask["method"] != "elicitation/create" {
		t.Fatalf("greet: inputRequests %v", res["inputRequests"])
	}
	st, _ := res["requestState"].(string)
	if st == "" {
		t.Fatalf("greet: no requestState in %v", res)
	}
	answer := `,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}}`
	res = call(t, base, "greet", `{}`, answer+`,"requestState":"`+st+`"`)
	if got := text(t, res); got != "Hello, Ada!" {
		t.Errorf("greet retried: %q", got)
	}
	// Without the state the retry starts over; with a tampered one it is
	// refused (-32602).
	if res = call(t, base, "greet", `{}`, answer); res["resultType"] != "input_required" {
		t.Errorf("greet retried without its state: %v", res)
	}
	if e := callError(t, base, "greet", `{}`, answer+`,"requestState":"`+st+`x"`); e.Code != -32602 {
		t.Errorf("greet with a tampered state: %+v", e)
	}

	// The legacy endpoint beside it serves the same tools to a 2025 client.
	status, sid, out := post(t, base+"/mcp-2025", nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if status != 200 || sid == "" || out["result"].(map[string]any)["protocolVersion"] != "2025-11-25" {
		t.Fatalf("legacy initialize: HTTP %d, session %q, %v", status, sid, out)
	}
	legacyHdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if status, _, _ := post(t, base+"/mcp-2025", legacyHdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != 202 {
		t.Fatalf("notifications/initialized: HTTP %d", status)
	}
	status, _, out = post(t, base+"/mcp-2025", legacyHdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"old"}}}`)
	if status != 200 || text(t, out["result"].(map[string]any)) != "old" {
		t.Errorf("legacy tools/call echo: HTTP %d, %v", status, out)
	}
}

// The stdio opt-in of "Keeping 2025-11-25 clients" compiles as written.
var _ = func(ctx context.Context, srv *engine.Server, ls *legacy.Server) error {
	return stdio.Serve(ctx, srv, stdio.Config{Upgrade: ls.StdioUpgrade})
}
