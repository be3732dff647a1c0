package streamhttp

import (
	"encoding/json"
	"testing"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// TestDialWithClient: the transport under a client.Client against the
// server of this repository: the era probe (server/discover), a call with
// progress (the server rate-limits it: at least one arrives), a
// tools/list that teaches the client the x-mcp-header
// bindings, then a call that needs them (Mcp-Param-*, PARAM-05).
func TestDialWithClient(t *testing.T) {
	leakCheck(t)
	h := startServer(t, fastFE)
	tr := dtDial(t, "http://"+h.addr+"/mcp", Config{})
	c := mcpclient.New(tr, mcpclient.Config{})
	ctx := dtCtx(t)
	var steps int
	res, err := c.CallTool(ctx, "quick", map[string]int{"steps": 3}, &mcpclient.CallOptions{OnProgress: func(mcpclient.Progress) { steps++ }})
	if err != nil {
		t.Fatal(err)
	}
	if c.Era() != mcpclient.EraModern || steps == 0 || len(res.Content) == 0 || res.Content[0].Text != "quick done" {
		t.Fatalf("era %v, %d progress, result %+v", c.Era(), steps, res)
	}
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = c.CallTool(ctx, "execute_sql", json.RawMessage(`{"region":"Zürich","priority":42,"query":"SELECT 1"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) == 0 || res.Content[0].Text != "1 row" {
		t.Fatalf("result %+v", res)
	}
}

// TestDialWithClientFallback2024: against a server that only has the
// 2024-11-05 HTTP+SSE transport, the client's probe falls back (the
// modern POST and the 2025 initialize are refused with 405), switches the
// transport to the HTTP+SSE era, initializes and calls a tool with
// progress.
func TestDialWithClientFallback2024(t *testing.T) {
	leakCheck(t)
	_, url := newDT2024(t)
	tr := dtDial(t, url, Config{})
	c := mcpclient.New(tr, mcpclient.Config{})
	ctx := dtCtx(t)
	var steps int
	res, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"x","arguments":{}}`), &mcpclient.CallOptions{OnProgress: func(mcpclient.Progress) { steps++ }})
	if err != nil {
		t.Fatal(err)
	}
	if c.Era() != mcpclient.Era2024 || steps != 1 {
		t.Fatalf("era %v, %d progress, result %s", c.Era(), steps, res.Raw)
	}
}

// TestDialWithClientFallback2025: against a 2025-11-25 server the probe
// falls back to initialize; the session id travels on later calls; after
// the session expires, the call is re-sent (the server ran nothing:
// ErrNotDelivered) once the client's connect hook has initialized again.
func TestDialWithClientFallback2025(t *testing.T) {
	leakCheck(t)
	fake := &dt2025{}
	srv := newDTServer(t, fake.handle)
	tr := dtDial(t, srv.url, Config{})
	c := mcpclient.New(tr, mcpclient.Config{})
	ctx := dtCtx(t)
	if _, err := c.Call(ctx, "tools/list", nil, nil); err != nil {
		t.Fatal(err)
	}
	if c.Era() != mcpclient.Era2025 || fake.last() != "tools/list sess-1 2025-11-25" {
		t.Fatalf("era %v, last request %q", c.Era(), fake.last())
	}
	fake.expire()
	if _, err := c.Call(ctx, "tools/list", nil, nil); err != nil {
		t.Fatalf("on the expired session: %v", err)
	}
	if got := fake.last(); got != "tools/list sess-2 2025-11-25" {
		t.Fatalf("last request %q", got)
	}
}
