package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// TestServeOAuthConfig: the --oauth-* flags reach the Verifier (resource
// from --http and --path, scopes per tool, the introspection secret from
// its file), and combinations that cannot work are refused before
// anything listens. Off by default.
func TestServeOAuthConfig(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseServeFlags([]string{"--http", "127.0.0.1:8123", "--path", "/m", "--oauth-issuer", "https://as.example",
		"--oauth-scope", "mcp,admin_tool=admin", "--oauth-scope", "admin_tool=audit",
		"--oauth-introspect", "https://as.example/introspect", "--oauth-client-id", "rs", "--oauth-client-secret-file", secret}).config()
	if err != nil {
		t.Fatal(err)
	}
	v := c.http.oauth
	if v == nil || v.MetadataURL() != "http://127.0.0.1:8123/.well-known/oauth-protected-resource/m" {
		t.Fatalf("verifier %v", v)
	}
	if len(c.ref.Middleware) != 1 || c.admin.oauth != v.Stats() {
		t.Errorf("tool scopes: middleware %d, admin stats %v", len(c.ref.Middleware), c.admin.oauth)
	}
	d, err := parseServeFlags([]string{"--http", "127.0.0.1:0"}).config()
	if err != nil || d.http.oauth != nil || len(d.ref.Middleware) != 0 {
		t.Fatalf("default: %v, %v", d.http.oauth, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:8123", "--oauth-scope", "mcp"}, "needs --oauth-issuer"},
		{[]string{"--stdio", "--oauth-issuer", "https://as.example"}, "need --http"},
		{[]string{"--http", "127.0.0.1:0", "--oauth-issuer", "https://as.example"}, "--oauth-resource URL is required"},
		{[]string{"--http", "0.0.0.0:8123", "--allow-non-loopback", "--insecure-plaintext", "--oauth-issuer", "https://as.example"}, "--oauth-resource URL is required"},
		{[]string{"--http", "127.0.0.1:8123", "--insecure-test-auth", "--oauth-issuer", "https://as.example"}, "exclude each other"},
		{[]string{"--http", "127.0.0.1:8123", "--oauth-introspect", "https://as.example/i"}, "needs --oauth-client-id"},
		{[]string{"--http", "127.0.0.1:8123", "--oauth-issuer", "https://as.example", "--oauth-client-id", "x"}, "credentials of --oauth-introspect"},
		{[]string{"--http", "127.0.0.1:8123", "--oauth-issuer", "http://as.example"}, "https is required"},
		{[]string{"--http", "127.0.0.1:8123", "--oauth-issuer", "https://as.example", "--oauth-scope", "=x"}, "want SCOPE or TOOL=SCOPE"},
	} {
		_, err := parseServeFlags(tc.args).config()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestServeOAuth: `serve --http --oauth-issuer --oauth-scope` end to end
// (F6): the metadata is served without a token, a request without one is
// 401 with resource_metadata, a token of the issuer for this resource
// calls echo, and one without echo's scope gets 403 insufficient_scope —
// also on the --legacy-path mount, which has no Authorize of its own (the
// engine's middleware refuses it there).
func TestServeOAuth(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var as *httptest.Server
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]string{"issuer": as.URL, "jwks_uri": as.URL + "/jwks", "token_endpoint": as.URL + "/token"})
		case "/jwks":
			json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer as.Close()
	addr := freeAddr(t)
	endpoint := "http://" + addr + "/mcp"
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join([]string{"serve", "--http", addr, "--log-level", "warn",
		"--oauth-issuer", as.URL, "--oauth-scope", "mcp,echo=echo", "--legacy-path", "/old"}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	sign := func(scope string) string {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(s).Claims(map[string]any{"iss": as.URL, "sub": "u", "aud": endpoint, "scope": scope,
			"exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	meta := "http://" + addr + "/.well-known/oauth-protected-resource/mcp"
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get(meta); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"resource":"`+endpoint+`"`) {
		t.Fatalf("metadata: %d %s", resp.StatusCode, b)
	}
	post := func(token string) (*http.Response, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, _ := post(""); resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+meta+`"`) {
		t.Errorf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp, body := post(sign("mcp echo")); resp.StatusCode != 200 || !strings.Contains(body, `"hi"`) {
		t.Errorf("good token: %d %s", resp.StatusCode, body)
	}
	if resp, _ := post(sign("mcp")); resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="echo mcp"`) {
		t.Errorf("without echo's scope: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	// The 2025-11-25 endpoint: same token check, same per-tool scopes.
	legacy := func(token, sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/old", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const echo = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	if resp, _ := legacy("", "", init); resp.StatusCode != 401 {
		t.Errorf("legacy without a token: %d, want 401", resp.StatusCode)
	}
	for _, tc := range []struct {
		scope string
		ok    bool
	}{{"mcp", false}, {"mcp echo", true}} {
		tok := sign(tc.scope)
		resp, body := legacy(tok, "", init)
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != 200 || sid == "" {
			t.Fatalf("legacy initialize: %d %s", resp.StatusCode, body)
		}
		legacy(tok, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		resp, body = legacy(tok, sid, echo)
		if got := strings.Contains(body, `"text":"hi"`); got != tc.ok || (!tc.ok && !strings.Contains(body, `"error"`)) {
			t.Errorf("legacy echo with scope %q: %d %s", tc.scope, resp.StatusCode, body)
		}
		// A scope the token lacks: 403 with the step-up challenge, as on
		// the modern endpoint, so a 2025-11-25 client can ask for it.
		challenge := `Bearer error="insufficient_scope", scope="echo mcp", resource_metadata="` + meta + `"`
		if wantStatus := map[bool]int{true: 200, false: 403}[tc.ok]; resp.StatusCode != wantStatus ||
			(!tc.ok && resp.Header.Get("WWW-Authenticate") != challenge) {
			t.Errorf("legacy echo with scope %q: %d, WWW-Authenticate %q; want %d and %q", tc.scope, resp.StatusCode,
				resp.Header.Get("WWW-Authenticate"), wantStatus, challenge)
		}
	}
}
