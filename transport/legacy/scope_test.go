package legacy_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/legacy"
)

// TestInsufficientScopeChallenge: a call the engine refuses with 403 and
// the scopes it needs in the error's data (auth.Verifier's Middleware,
// the only per-tool scope check a mount has) is answered 403 with the
// step-up challenge of the 2025-11-25 authorization spec (SEC-04, with
// resource_metadata), on the fasthttp
// fast path and on net/http alike; a scope a header cannot carry gets no
// challenge.
func TestInsufficientScopeChallenge(t *testing.T) {
	leakCheck(t)
	eng := newEngine(t)
	for name, scope := range map[string]string{"locked": `"files:read mcp"`, "odd": `"a\"b"`} {
		refusal := &codec.Error{Code: codec.CodeInvalidRequest, Message: "Forbidden", Data: []byte(`{"scope":` + scope + `}`), Status: 403}
		if err := eng.AddTool(engine.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
			Handler: func(*engine.Call) error { return refusal }}); err != nil {
			t.Fatal(err)
		}
	}
	const meta = "https://mcp.example/.well-known/oauth-protected-resource"
	const want = `Bearer error="insufficient_scope", scope="files:read mcp", resource_metadata="` + meta + `"`
	check := func(path string, status int, challenge, body string, wantChallenge string) {
		t.Helper()
		if status != 403 || challenge != wantChallenge || !strings.Contains(body, `"code":-32600`) {
			t.Errorf("%s: %d, WWW-Authenticate %q, %s; want 403, %q and the JSON-RPC error", path, status, challenge, body, wantChallenge)
		}
	}
	rg := startRig(t, eng, legacy.Config{ResourceMetadata: meta})
	sid := rg.initialize(t)
	r := rg.do(t, "POST", legacyPath, sid, call(2, "locked", `{}`), "MCP-Protocol-Version: 2025-11-25")
	check("mounted", r.status, r.hdr.Get("WWW-Authenticate"), r.raw, want)
	r = rg.do(t, "POST", legacyPath, sid, call(3, "odd", `{}`), "MCP-Protocol-Version: 2025-11-25")
	check("mounted, unquotable scope", r.status, r.hdr.Get("WWW-Authenticate"), r.raw, "")

	// Served by net/http alone.
	standalone := legacy.New(eng, legacy.Config{ResourceMetadata: meta})
	t.Cleanup(func() { _ = standalone.Shutdown(context.Background()) })
	post := func(sid, body string) *httptest.ResponseRecorder {
		rr := httptest.NewRecorder()
		req := httptest.NewRequest("POST", legacyPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(legacy.HeaderSession, sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		standalone.Handler().ServeHTTP(rr, req)
		return rr
	}
	sid = post("", initBody).Header().Get(legacy.HeaderSession)
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	rr := post(sid, call(2, "locked", `{}`))
	check("net/http", rr.Code, rr.Header().Get("WWW-Authenticate"), rr.Body.String(), want)
}
