package streamhttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestAuthInvalidTokenChallenge: SEC-04, RFC 6750 §3.1, F6. A refused
// token is answered with error="invalid_token" next to resource_metadata;
// a request without a token gets the bare challenge (no error code).
func TestAuthInvalidTokenChallenge(t *testing.T) {
	const meta = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
	auth := func(context.Context, string) (any, error) { return nil, ErrUnauthorized }
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		for _, withMeta := range []bool{true, false} {
			cfg := Config{Authenticate: auth}
			if withMeta {
				cfg.ResourceMetadata = meta
			}
			h := startHarness(t, fe, cfg, defaultOptions())
			resp, _ := h.do(t, request{hdr: append(ex2Hdr(), "Authorization: Bearer forged"), body: fixture.Ex2Body})
			w := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != 401 || !strings.HasPrefix(w, "Bearer ") || !strings.Contains(w, `error="invalid_token"`) {
				t.Errorf("meta %v, forged token: %d %q, want 401 with error=\"invalid_token\"", withMeta, resp.StatusCode, w)
			}
			if withMeta && !strings.Contains(w, `resource_metadata="`+meta+`"`) {
				t.Errorf("forged token: %q lacks resource_metadata", w)
			}
			resp, _ = h.do(t, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
			w = resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != 401 || strings.Contains(w, "error=") {
				t.Errorf("meta %v, no token: %d %q, want 401 without an error code", withMeta, resp.StatusCode, w)
			}
		}
		// ChallengeScope names the scopes to ask for (RFC 6750 §3), with
		// and without a token.
		h := startHarness(t, fe, Config{Authenticate: auth, ResourceMetadata: meta, ChallengeScope: "mcp read"}, defaultOptions())
		for _, tok := range []string{"", "forged"} {
			hdr := ex2Hdr()
			if tok != "" {
				hdr = append(hdr, "Authorization: Bearer "+tok)
			}
			resp, _ := h.do(t, request{hdr: hdr, body: fixture.Ex2Body})
			if w := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.Contains(w, `scope="mcp read"`) || !strings.Contains(w, `resource_metadata="`+meta+`"`) {
				t.Errorf("ChallengeScope, token %q: %d %q", tok, resp.StatusCode, w)
			}
		}
	})
}

// TestAuthorize: Config.Authorize sees the validated method and tool name
// and the Authenticator's principal; ErrInsufficientScope answers 403
// with the insufficient_scope challenge and a JSON-RPC error for the
// request's id, and the handler does not run (F6).
func TestAuthorize(t *testing.T) {
	const meta = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
	type seen struct {
		principal    any
		method, name string
	}
	var mu sync.Mutex
	var calls []seen
	auth := func(context.Context, string) (any, error) { return "alice", nil }
	authz := func(_ context.Context, p any, method, name string) error {
		mu.Lock()
		calls = append(calls, seen{p, method, name})
		mu.Unlock()
		if name == "whoami" {
			return &ErrInsufficientScope{Scope: "mcp who"}
		}
		return nil
	}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		mu.Lock()
		calls = nil
		mu.Unlock()
		h := startHarness(t, fe, Config{Authenticate: auth, Authorize: authz, ResourceMetadata: meta}, defaultOptions())
		tok := "Authorization: Bearer t"
		resp, body := h.do(t, request{hdr: append(mcpHdr("tools/call", "Mcp-Name: whoami"), tok), body: fixture.ToolsCall("41", "whoami", `{}`)})
		w := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != 403 || !strings.Contains(w, `error="insufficient_scope"`) || !strings.Contains(w, `scope="mcp who"`) || !strings.Contains(w, `resource_metadata="`+meta+`"`) {
			t.Fatalf("refused tool: %d %q", resp.StatusCode, w)
		}
		if m := fixture.DecodeMsg(t, body); string(m.ID) != "41" || m.Error == nil {
			t.Errorf("refused tool: body %s, want a JSON-RPC error for id 41", body)
		}
		resp, body = h.do(t, request{hdr: append(ex2Hdr(), tok), body: fixture.Ex2Body})
		if resp.StatusCode != 200 {
			t.Fatalf("allowed tool: %d %s", resp.StatusCode, body)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(calls) != 2 || calls[0] != (seen{"alice", "tools/call", "whoami"}) || calls[1].method != "tools/call" || calls[1].name == "" {
			t.Errorf("Authorize saw %+v", calls)
		}
	})
}

// TestPublicMounts: a PublicMounts path is served without a token while
// Authenticate still guards Mounts and the MCP endpoint.
func TestPublicMounts(t *testing.T) {
	auth := func(context.Context, string) (any, error) { return nil, ErrUnauthorized }
	pub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if PrincipalFrom(r.Context()) != nil {
			t.Error("a public mount got a principal")
		}
		w.Write([]byte("public"))
	})
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{Authenticate: auth,
			Mounts:       map[string]http.Handler{"/private": pub},
			PublicMounts: map[string]http.Handler{"/.well-known/oauth-protected-resource": pub}}, defaultOptions())
		if resp, body := h.do(t, request{method: "GET", path: "/.well-known/oauth-protected-resource"}); resp.StatusCode != 200 || string(body) != "public" {
			t.Errorf("public mount: %d %q", resp.StatusCode, body)
		}
		if resp, _ := h.do(t, request{method: "GET", path: "/private"}); resp.StatusCode != 401 {
			t.Errorf("guarded mount: %d, want 401", resp.StatusCode)
		}
		if resp, _ := h.do(t, request{method: "GET", path: "/.well-known/oauth-protected-resource", hdr: []string{"Origin: http://evil.example"}}); resp.StatusCode != 403 {
			t.Errorf("public mount, foreign Origin: %d, want 403", resp.StatusCode)
		}
	})
}

// TestTLSVerifiedChains: on TLS front ends with client certificates (mTLS)
// the Authenticator's context carries the verified peer chain; without a
// client certificate it carries none.
func TestTLSVerifiedChains(t *testing.T) {
	f := newTLSFixture(t)
	cl, err := f.ca.ClientLeaf("workload-7")
	if err != nil {
		t.Fatal(err)
	}
	ccert, err := cl.TLS()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got [][]*x509.Certificate
	auth := func(ctx context.Context, _ string) (any, error) {
		mu.Lock()
		got = VerifiedChains(ctx)
		mu.Unlock()
		return "ok", nil
	}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{Authenticate: auth, TLS: &tls.Config{Certificates: []tls.Certificate{f.cert},
			ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: f.ca.Pool()}}, defaultOptions())
		url := "https://" + h.addr + "/mcp"
		withCert := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: f.ca.Pool(), Certificates: []tls.Certificate{ccert}}}}
		if resp, body := postEcho(t, withCert, url, "m"); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		mu.Lock()
		if len(got) == 0 || got[0][0].Subject.CommonName != "workload-7" {
			t.Errorf("with a client certificate: chains %v, want workload-7's", got)
		}
		mu.Unlock()
		if resp, body := postEcho(t, f.httpsClient(), url, "m"); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		mu.Lock()
		if got != nil {
			t.Errorf("without a client certificate: chains %v, want none", got)
		}
		mu.Unlock()
	})
}
