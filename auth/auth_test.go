package auth_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/client/oauth"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"github.com/mcpwire/mcpwire/internal/testcert"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// The two HTTP front ends.
var frontEnds = []string{"fasthttp", "nethttp"}

// mcpServer is an MCP server on loopback guarded by a Verifier.
type mcpServer struct {
	url string // the MCP endpoint
	v   *auth.Verifier
}

// startServer serves an engine with the tools echo (no scope of its own),
// whoami (the principal's subject and scopes) and admin (scope "admin")
// behind fe, the Verifier configured by cfg (Resource filled in).
func startServer(t *testing.T, fe string, cfg auth.Config) *mcpServer {
	return startServerWith(t, fe, cfg, nil)
}

// serverOptions changes startServerWith's setup.
type serverOptions struct {
	tls        *tls.Config // serve HTTPS
	middleware bool        // the Verifier's Middleware in the engine
	noAuthz    bool        // streamhttp without the Verifier's Authorize
}

func startServerWith(t *testing.T, fe string, cfg auth.Config, o *serverOptions) *mcpServer {
	t.Helper()
	if o == nil {
		o = &serverOptions{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "http://"
	if o.tls != nil {
		scheme = "https://"
	}
	endpoint := scheme + ln.Addr().String() + "/mcp"
	cfg.Resource = endpoint
	if cfg.ToolScopes == nil {
		cfg.ToolScopes = map[string][]string{"admin": {"admin"}}
	}
	v, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ecfg := engine.Config{Name: "guarded", Version: "1"}
	if o.middleware {
		ecfg.Middleware = []engine.Middleware{v.Middleware()}
	}
	eng := engine.New(ecfg)
	for _, name := range []string{"echo", "whoami", "admin"} {
		err := eng.AddTool(engine.Tool{Name: name, Inline: true, Handler: func(c *engine.Call) error {
			p := auth.PrincipalOf(c)
			if p == nil {
				c.Text("anonymous")
				return nil
			}
			cn := ""
			if p.Certificate != nil {
				cn = " cert=" + p.Certificate.Subject.CommonName
			}
			c.Text(p.Subject + " " + strings.Join(p.Scopes, ",") + cn)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	hc := streamhttp.Config{TLS: o.tls}
	v.Install(&hc)
	if o.noAuthz {
		hc.Authorize = nil
	}
	srv := streamhttp.New(eng, hc)
	done := make(chan error, 1)
	switch fe {
	case "fasthttp":
		go func() { done <- srv.Serve(ln) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
			eng.Shutdown(ctx)
			<-done
		})
	case "nethttp":
		h, err := srv.Handler(ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: h, ConnContext: srv.ConnContext, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 10 * time.Second}
		go func() { done <- hs.Serve(srv.NetListener(ln)) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
			hs.Shutdown(ctx)
			eng.Shutdown(ctx)
			<-done
		})
	}
	return &mcpServer{url: endpoint, v: v}
}

// call posts tools/call of tool with token (none when "") and returns the
// response and its body.
func (s *mcpServer) call(t *testing.T, tool, token string) (*http.Response, string) {
	t.Helper()
	return s.callWith(t, &http.Client{Timeout: 10 * time.Second}, tool, token)
}

func (s *mcpServer) callWith(t *testing.T, hc *http.Client, tool, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(fixture.ToolsCall("1", tool, `{}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestEndToEndOAuthClient: F6, SEC-04. mcpwire's own OAuth client, with
// nothing but the MCP endpoint and its client credentials, follows the
// 401's resource_metadata to this package's Protected Resource Metadata,
// then the authorization server's metadata, obtains a token for the
// resource (RFC 8707) and calls a tool; the handler sees the verified
// subject and scopes. A tool needing a scope the token lacks is answered
// 403 insufficient_scope, and the client steps up to it.
func TestEndToEndOAuthClient(t *testing.T) {
	for _, fe := range frontEnds {
		t.Run(fe, func(t *testing.T) {
			fixture.LeakCheck(t)
			as := newTestAS(t, newRSAKey(t, "k1"))
			// The metadata suggests "mcp" only: the first token lacks "admin".
			s := startServer(t, fe, auth.Config{Issuer: as.issuer(), Scopes: []string{"mcp"}, ScopesSupported: []string{"mcp"}})
			c, err := target.Open(s.url, target.Config{OAuth: &oauth.Config{Grant: oauth.GrantClientCredentials,
				ClientID: as.clientID, ClientSecret: as.secret}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctxT(t), "whoami", map[string]any{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolText(res.Content); got != "agent-42 mcp" {
				t.Fatalf("whoami = %q, want the token's subject and scopes", got)
			}
			// admin needs "admin": 403 insufficient_scope names mcp and
			// admin, the client asks for them and the call goes through.
			res, err = c.CallTool(ctxT(t), "admin", map[string]any{}, nil)
			if err != nil {
				t.Fatalf("admin after step-up: %v", err)
			}
			if got := toolText(res.Content); got != "agent-42 admin,mcp" && got != "agent-42 mcp,admin" {
				t.Fatalf("admin = %q", got)
			}
			if n := as.tokens.Load(); n != 2 {
				t.Errorf("tokens issued: %d, want 2 (the first, then the step-up)", n)
			}
			if n := s.v.Stats().InsufficientScope.Load(); n != 1 {
				t.Errorf("InsufficientScope = %d, want 1", n)
			}
		})
	}
}

func toolText(content any) string {
	b, _ := json.Marshal(content)
	var items []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(b, &items)
	if len(items) == 0 {
		return string(b)
	}
	return items[0].Text
}

// TestProtectedResourceMetadata: RFC 9728 §3 on both front ends, without
// a token: the path-suffixed URI (advertised) and the root one.
func TestProtectedResourceMetadata(t *testing.T) {
	for _, fe := range frontEnds {
		t.Run(fe, func(t *testing.T) {
			fixture.LeakCheck(t)
			as := newTestAS(t, newECKey(t, "e1"))
			s := startServer(t, fe, auth.Config{Issuer: as.issuer(), Scopes: []string{"mcp"}})
			root := strings.TrimSuffix(s.url, "/mcp")
			if want := root + "/.well-known/oauth-protected-resource/mcp"; s.v.MetadataURL() != want {
				t.Errorf("MetadataURL = %q, want %q", s.v.MetadataURL(), want)
			}
			for _, u := range []string{s.v.MetadataURL(), root + "/.well-known/oauth-protected-resource"} {
				resp, err := http.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				var md struct {
					Resource             string   `json:"resource"`
					AuthorizationServers []string `json:"authorization_servers"`
					ScopesSupported      []string `json:"scopes_supported"`
					BearerMethods        []string `json:"bearer_methods_supported"`
				}
				err = json.NewDecoder(resp.Body).Decode(&md)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
				}
				if md.Resource != s.url || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != as.issuer() ||
					strings.Join(md.ScopesSupported, " ") != "admin mcp" || strings.Join(md.BearerMethods, " ") != "header" {
					t.Errorf("GET %s: %+v", u, md)
				}
			}
			// The 401 advertises the path-suffixed URI, and the scopes to
			// ask for (Config.Scopes).
			resp, _ := s.call(t, "echo", "")
			if w := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(w, `resource_metadata="`+s.v.MetadataURL()+`"`) || !strings.Contains(w, `scope="mcp"`) {
				t.Errorf("no token: %d %q", resp.StatusCode, w)
			}
		})
	}
}

// TestRefusedTokens: F6. Each bad token is answered 401 with
// error="invalid_token" and resource_metadata, on both front ends, and
// the handler never runs; a good token without the tool's scope is 403
// insufficient_scope naming the scopes the call needs.
func TestRefusedTokens(t *testing.T) {
	for _, fe := range frontEnds {
		t.Run(fe, func(t *testing.T) {
			fixture.LeakCheck(t)
			k1 := newRSAKey(t, "k1")
			as := newTestAS(t, k1)
			s := startServer(t, fe, auth.Config{Issuer: as.issuer(), Scopes: []string{"mcp"}})
			now := time.Now()
			good := func() map[string]any {
				return map[string]any{"iss": as.issuer(), "sub": "u1", "aud": s.url, "scope": "mcp",
					"exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
			}
			with := func(k string, v any) map[string]any {
				c := good()
				if v == nil {
					delete(c, k)
				} else {
					c[k] = v
				}
				return c
			}
			ghost := newRSAKey(t, "ghost")
			pubDER, _ := x509.MarshalPKIXPublicKey(k1.priv.Public())
			valid := k1.sign(t, good())
			parts := strings.Split(valid, ".")
			tampered := parts[0] + "." + b64([]byte(strings.Replace(string(mustB64(t, parts[1])), `"u1"`, `"u2"`, 1))) + "." + parts[2]
			for _, tc := range []struct{ name, token string }{
				{"expired", k1.sign(t, with("exp", now.Add(-2*time.Hour).Unix()))},
				{"no_exp", k1.sign(t, with("exp", nil))},
				{"not_yet_valid", k1.sign(t, with("nbf", now.Add(time.Hour).Unix()))},
				{"wrong_audience", k1.sign(t, with("aud", "https://other.example/mcp"))},
				{"no_audience", k1.sign(t, with("aud", nil))},
				{"wrong_issuer", k1.sign(t, with("iss", "https://evil.example"))},
				{"unknown_kid", ghost.sign(t, good())},
				{"alg_none", rawToken(t, map[string]any{"alg": "none", "kid": "k1"}, good(), func([]byte) []byte { return nil })},
				{"alg_none_dot", strings.Join(strings.Split(rawToken(t, map[string]any{"alg": "none"}, good(), func([]byte) []byte { return []byte{} }), ".")[:2], ".") + "."},
				{"hs256_with_public_key", rawToken(t, map[string]any{"alg": "HS256", "kid": "k1", "typ": "at+jwt"}, good(), func(in []byte) []byte {
					m := hmac.New(sha256.New, pubDER)
					m.Write(in)
					return m.Sum(nil)
				})},
				{"tampered_payload", tampered},
				{"tampered_signature", parts[0] + "." + parts[1] + "." + flip(parts[2])},
				{"key_of_wrong_type", rawToken(t, map[string]any{"alg": "ES256", "kid": "k1"}, good(), func(in []byte) []byte { return make([]byte, 64) })},
				{"critical_header", rawToken(t, map[string]any{"alg": "RS256", "kid": "k1", "crit": []string{"x"}, "x": 1}, good(), func(in []byte) []byte { return rsaSign(t, k1, in) })},
				{"opaque_without_introspection", "just-an-opaque-token"},
				{"garbage", "a.b.c"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					resp, body := s.call(t, "whoami", tc.token)
					w := resp.Header.Get("WWW-Authenticate")
					if resp.StatusCode != 401 || !strings.Contains(w, `error="invalid_token"`) || !strings.Contains(w, `resource_metadata="`+s.v.MetadataURL()+`"`) {
						t.Fatalf("%d %q %s, want 401 invalid_token with resource_metadata", resp.StatusCode, w, body)
					}
				})
			}
			// The control: the same claims, well signed, pass.
			if resp, body := s.call(t, "whoami", valid); resp.StatusCode != 200 || !strings.Contains(body, "u1 mcp") {
				t.Fatalf("valid token: %d %s", resp.StatusCode, body)
			}
			// Scopes: without the default scope, 403 naming it; without
			// the tool's scope, 403 naming what the call needs.
			resp, _ := s.call(t, "echo", k1.sign(t, with("scope", "other")))
			if w := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(w, `error="insufficient_scope", scope="mcp"`) || !strings.Contains(w, "resource_metadata=") {
				t.Errorf("no default scope: %d %q", resp.StatusCode, w)
			}
			resp, body := s.call(t, "admin", valid)
			if w := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(w, `error="insufficient_scope", scope="admin mcp"`) || !strings.Contains(w, "resource_metadata=") {
				t.Errorf("no tool scope: %d %q %s", resp.StatusCode, w, body)
			}
			if resp, body := s.call(t, "admin", k1.sign(t, with("scp", []string{"mcp", "admin"}))); resp.StatusCode != 403 {
				// scope wins over scp when both are present
				t.Errorf("scope mcp with scp admin: %d %s, want 403", resp.StatusCode, body)
			}
			if resp, body := s.call(t, "admin", k1.sign(t, with("scope", "mcp admin"))); resp.StatusCode != 200 {
				t.Errorf("with the tool's scope: %d %s", resp.StatusCode, body)
			}
			// The unknown kids above refetched the key set at most once
			// (JWKSMinRefetch), on top of the first fetch.
			if n := as.jwksHits.Load(); n > 2 {
				t.Errorf("key set fetched %d times, want at most 2", n)
			}
		})
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// flip changes one character of a base64url string.
func flip(s string) string {
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func rsaSign(t *testing.T, k *signingKey, in []byte) []byte {
	t.Helper()
	h := sha256.Sum256(in)
	sig, err := k.priv.Sign(rand.Reader, h[:], cryptoSHA256)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// TestKeyRotation: a key the issuer starts serving after the server
// started (a new kid) is picked up: the unknown kid refetches the set.
// With JWKSMinRefetch, a burst of tokens naming kids nobody serves
// refetches it at most once more.
func TestKeyRotation(t *testing.T) {
	fixture.LeakCheck(t)
	k1 := newECKey(t, "k1")
	as := newTestAS(t, k1)
	s := startServer(t, "fasthttp", auth.Config{Issuer: as.issuer()})
	claims := func() map[string]any {
		return map[string]any{"iss": as.issuer(), "sub": "u", "aud": s.url, "exp": time.Now().Add(time.Hour).Unix()}
	}
	if resp, body := s.call(t, "echo", k1.sign(t, claims())); resp.StatusCode != 200 {
		t.Fatalf("k1: %d %s", resp.StatusCode, body)
	}
	k2 := newRSAKey(t, "k2")
	as.rotate(k2)
	if resp, body := s.call(t, "echo", k2.sign(t, claims())); resp.StatusCode != 200 {
		t.Fatalf("k2 after rotation: %d %s", resp.StatusCode, body)
	}
	if n := as.jwksHits.Load(); n != 2 {
		t.Errorf("key set fetched %d times, want 2", n)
	}
	ghost := newECKey(t, "ghost")
	for i := 0; i < 5; i++ {
		ghost.kid = "ghost" + string(rune('a'+i))
		if resp, _ := s.call(t, "echo", ghost.sign(t, claims())); resp.StatusCode != 401 {
			t.Fatalf("unknown kid: %d", resp.StatusCode)
		}
	}
	if n := as.jwksHits.Load(); n != 2 {
		t.Errorf("key set fetched %d times after 5 unknown kids, want still 2 (rate-limited)", n)
	}
	if n := s.v.Stats().RefetchLimited.Load(); n != 5 {
		t.Errorf("RefetchLimited = %d, want 5", n)
	}
}

// TestIntrospection: RFC 7662 for opaque tokens; the endpoint's answer is
// held to the same audience, issuer and expiry rules.
func TestIntrospection(t *testing.T) {
	fixture.LeakCheck(t)
	as := newTestAS(t, newECKey(t, "k1"))
	s := startServer(t, "nethttp", auth.Config{Issuer: as.issuer(), Scopes: []string{"mcp"},
		Introspection: &auth.Introspection{URL: as.issuer() + "/introspect", ClientID: as.rsID, ClientSecret: as.rsSecret}})
	exp := time.Now().Add(time.Hour).Unix()
	as.addOpaque("good", map[string]any{"active": true, "sub": "op1", "aud": s.url, "iss": as.issuer(), "scope": "mcp", "exp": exp})
	as.addOpaque("inactive", map[string]any{"active": false, "sub": "op1", "aud": s.url})
	as.addOpaque("other-aud", map[string]any{"active": true, "sub": "op1", "aud": []string{"https://other.example"}, "scope": "mcp", "exp": exp})
	as.addOpaque("no-aud", map[string]any{"active": true, "sub": "op1", "scope": "mcp", "exp": exp})
	as.addOpaque("other-iss", map[string]any{"active": true, "sub": "op1", "aud": s.url, "iss": "https://evil.example", "scope": "mcp", "exp": exp})
	as.addOpaque("expired", map[string]any{"active": true, "sub": "op1", "aud": s.url, "scope": "mcp", "exp": time.Now().Add(-time.Hour).Unix()})
	if resp, body := s.call(t, "whoami", "good"); resp.StatusCode != 200 || !strings.Contains(body, "op1 mcp") {
		t.Fatalf("good opaque token: %d %s", resp.StatusCode, body)
	}
	for _, tok := range []string{"inactive", "other-aud", "no-aud", "other-iss", "expired", "unknown"} {
		if resp, _ := s.call(t, "whoami", tok); resp.StatusCode != 401 {
			t.Errorf("%s: %d, want 401", tok, resp.StatusCode)
		}
	}
	if n := as.introspect.Load(); n != 7 {
		t.Errorf("introspection requests: %d, want 7", n)
	}
}

// TestIntrospectionOnly: without an issuer every token, JWT-shaped or
// not, goes to the introspection endpoint.
func TestIntrospectionOnly(t *testing.T) {
	fixture.LeakCheck(t)
	as := newTestAS(t, newECKey(t, "k1"))
	s := startServer(t, "fasthttp", auth.Config{
		Introspection: &auth.Introspection{URL: as.issuer() + "/introspect", ClientID: as.rsID, ClientSecret: as.rsSecret}})
	as.addOpaque("ref.a.b", map[string]any{"active": true, "sub": "op2", "aud": s.url, "scope": "x", "exp": time.Now().Add(time.Hour).Unix()})
	if resp, body := s.call(t, "whoami", "ref.a.b"); resp.StatusCode != 200 || !strings.Contains(body, "op2 x") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if resp, _ := s.call(t, "whoami", "ref.a.c"); resp.StatusCode != 401 {
		t.Fatalf("unknown token: %d", resp.StatusCode)
	}
}

// TestNewRefuses: configurations that would weaken verification are
// refused by New.
func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  auth.Config
	}{
		{"no_resource", auth.Config{Issuer: "https://as.example"}},
		{"no_issuer_nor_introspection", auth.Config{Resource: "https://mcp.example/mcp"}},
		{"plain_http_issuer", auth.Config{Resource: "https://mcp.example/mcp", Issuer: "http://as.example"}},
		{"alg_none", auth.Config{Resource: "https://mcp.example/mcp", Issuer: "https://as.example", Algorithms: []string{"none"}}},
		{"alg_hs256", auth.Config{Resource: "https://mcp.example/mcp", Issuer: "https://as.example", Algorithms: []string{"RS256", "HS256"}}},
		{"scope_with_space", auth.Config{Resource: "https://mcp.example/mcp", Issuer: "https://as.example", Scopes: []string{"a b"}}},
		{"introspection_without_client", auth.Config{Resource: "https://mcp.example/mcp", Introspection: &auth.Introspection{URL: "https://as.example/i"}}},
	} {
		if _, err := auth.New(tc.cfg); err == nil {
			t.Errorf("%s: New accepted it", tc.name)
		}
	}
}

// TestCertificateBound: RFC 8705 §3. A token whose cnf names a client
// certificate's thumbprint is refused without that certificate (here:
// over plain HTTP, no certificate at all).
func TestCertificateBound(t *testing.T) {
	fixture.LeakCheck(t)
	k1 := newECKey(t, "k1")
	as := newTestAS(t, k1)
	s := startServer(t, "fasthttp", auth.Config{Issuer: as.issuer()})
	tok := k1.sign(t, map[string]any{"iss": as.issuer(), "sub": "u", "aud": s.url, "exp": time.Now().Add(time.Hour).Unix(),
		"cnf": map[string]string{"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"}})
	if resp, _ := s.call(t, "echo", tok); resp.StatusCode != 401 {
		t.Errorf("certificate-bound token without a certificate: %d, want 401", resp.StatusCode)
	}
}

// TestMiddleware: the Verifier's engine Middleware enforces per-tool
// scopes on its own (here with streamhttp's Authorize left out, as on a
// path that has none): a 403 JSON-RPC error whose data names the scope
// the call needs, the handler not run.
func TestMiddleware(t *testing.T) {
	fixture.LeakCheck(t)
	k1 := newECKey(t, "k1")
	as := newTestAS(t, k1)
	s := startServerWith(t, "fasthttp", auth.Config{Issuer: as.issuer()}, &serverOptions{middleware: true, noAuthz: true})
	tok := func(scope string) string {
		return k1.sign(t, map[string]any{"iss": as.issuer(), "sub": "u", "aud": s.url, "scope": scope, "exp": time.Now().Add(time.Hour).Unix()})
	}
	resp, body := s.call(t, "admin", tok("mcp"))
	if m := fixture.DecodeMsg(t, []byte(body)); resp.StatusCode != 403 || m.Error == nil || strings.Contains(body, "u mcp") ||
		!strings.Contains(body, `"data":{"scope":"admin"}`) {
		t.Errorf("admin without its scope: %d %s, want 403 and a JSON-RPC error naming the scope", resp.StatusCode, body)
	}
	if resp, body := s.call(t, "admin", tok("admin")); resp.StatusCode != 200 || !strings.Contains(body, "u admin") {
		t.Errorf("admin with its scope: %d %s", resp.StatusCode, body)
	}
	if resp, body := s.call(t, "echo", tok("")); resp.StatusCode != 200 {
		t.Errorf("echo (no scope needed): %d %s", resp.StatusCode, body)
	}
}

// TestMutualTLS: on a TLS front end with client certificates, the
// verified certificate reaches the Principal, and a token bound to it
// (RFC 8705 cnf x5t#S256) is accepted from that client only.
func TestMutualTLS(t *testing.T) {
	ca, err := testcert.NewCA("mtls CA")
	if err != nil {
		t.Fatal(err)
	}
	srvLeaf, _ := ca.Leaf("server")
	srvCert, _ := srvLeaf.TLS()
	mkClient := func(cn string) (tls.Certificate, *x509.Certificate) {
		l, err := ca.ClientLeaf(cn)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := l.TLS()
		x, _ := x509.ParseCertificate(c.Certificate[0])
		return c, x
	}
	aliceCert, aliceX := mkClient("alice-workload")
	bobCert, _ := mkClient("bob-workload")
	sum := sha256.Sum256(aliceX.Raw)
	thumb := base64.RawURLEncoding.EncodeToString(sum[:])
	for _, fe := range frontEnds {
		t.Run(fe, func(t *testing.T) {
			fixture.LeakCheck(t)
			k1 := newECKey(t, "k1")
			as := newTestAS(t, k1)
			s := startServerWith(t, fe, auth.Config{Issuer: as.issuer()}, &serverOptions{tls: &tls.Config{
				Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: ca.Pool()}})
			bound := k1.sign(t, map[string]any{"iss": as.issuer(), "sub": "alice", "aud": s.url, "scope": "mcp",
				"exp": time.Now().Add(time.Hour).Unix(), "cnf": map[string]string{"x5t#S256": thumb}})
			client := func(cert *tls.Certificate) *http.Client {
				c := &tls.Config{RootCAs: ca.Pool()}
				if cert != nil {
					c.Certificates = []tls.Certificate{*cert}
				}
				return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: c, DisableKeepAlives: true}}
			}
			if resp, body := s.callWith(t, client(&aliceCert), "whoami", bound); resp.StatusCode != 200 || !strings.Contains(body, "alice mcp cert=alice-workload") {
				t.Errorf("alice with her certificate: %d %s", resp.StatusCode, body)
			}
			if resp, _ := s.callWith(t, client(&bobCert), "whoami", bound); resp.StatusCode != 401 {
				t.Errorf("alice's token from bob's certificate: %d, want 401", resp.StatusCode)
			}
			if resp, _ := s.callWith(t, client(nil), "whoami", bound); resp.StatusCode != 401 {
				t.Errorf("alice's token without a certificate: %d, want 401", resp.StatusCode)
			}
		})
	}
}

// TestIssuerDown: while the issuer cannot be reached, tokens are refused
// with 401 (never accepted unverified), the error wrapping
// ErrInvalidToken; once it is back the verifier tries again, but not
// more than once a second.
func TestIssuerDown(t *testing.T) {
	fixture.LeakCheck(t)
	k1 := newECKey(t, "k1")
	as := newTestAS(t, k1)
	as.down.Store(true)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	v, err := auth.New(auth.Config{Resource: "https://mcp.example/mcp", Issuer: as.issuer(),
		Now: func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	tok := k1.sign(t, map[string]any{"iss": as.issuer(), "sub": "u", "aud": "https://mcp.example/mcp", "exp": time.Now().Add(time.Hour).Unix()})
	if _, err := v.Verify(ctxT(t), tok); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("issuer down: %v, want ErrInvalidToken", err)
	}
	as.down.Store(false)
	if _, err := v.Verify(ctxT(t), tok); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("issuer back, within a second: %v, want still refused (no retry yet)", err)
	}
	now.Add(int64(2 * time.Second))
	if p, err := v.Verify(ctxT(t), tok); err != nil || p.Subject != "u" {
		t.Fatalf("issuer back, later: %v %v", p, err)
	}
	if n := v.Stats().KeyFetches.Load(); n != 1 {
		t.Errorf("KeyFetches = %d, want 1", n)
	}
}
