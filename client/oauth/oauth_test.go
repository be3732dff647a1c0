package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is an authorization server and the metadata side of a protected
// resource on one loopback httptest server.
type fake struct {
	t   *testing.T
	srv *httptest.Server

	// knobs
	asPath        string   // issuer path ("" or "/tenant1")
	asAt          string   // "oauth" (default), "oidc-insert", "oidc-append": where the AS metadata lives
	prmAt         string   // "path" (default) or "root"
	resource      string   // PRM resource ("" = endpoint)
	prmScopes     []string // PRM scopes_supported
	asScopes      []string // AS scopes_supported
	issuer        string   // metadata issuer override
	iss           string   // "correct" (default), "omit", "wrong", "slash"
	issSupported  bool
	noPKCE        bool
	noDCR         bool
	cimd          bool
	authMethods   []string
	expiresIn     int
	refreshTokens bool
	grantedScope  string // token response scope override
	dpop          bool   // advertise DPoP; issue DPoP tokens for proofs
	dpopNonce     string // nonce the token endpoint insists on
	proofs        []string

	mu        sync.Mutex
	gets      []string     // metadata paths requested
	authz     []url.Values // authorization requests
	tokenReqs []url.Values
	basic     []string // Basic credentials of token requests
	regs      []map[string]any
	challenge string // PKCE challenge of the last authorization request
	n         int
}

func newFake(t *testing.T, setup func(f *fake)) *fake {
	f := &fake{t: t, iss: "correct", issSupported: true, expiresIn: 3600}
	if setup != nil {
		setup(f)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) endpoint() string { return f.srv.URL + "/mcp" }
func (f *fake) asIssuer() string { return f.srv.URL + f.asPath }
func (f *fake) prmURL() string   { return f.srv.URL + "/.well-known/oauth-protected-resource/mcp" }

func (f *fake) handle(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	p := r.URL.Path
	if r.Method == http.MethodGet && strings.Contains(p, "/.well-known/") {
		f.gets = append(f.gets, p)
	}
	prmPath := "/.well-known/oauth-protected-resource/mcp"
	if f.prmAt == "root" {
		prmPath = "/.well-known/oauth-protected-resource"
	}
	asMeta := "/.well-known/oauth-authorization-server" + f.asPath
	switch f.asAt {
	case "oidc-insert":
		asMeta = "/.well-known/openid-configuration" + f.asPath
	case "oidc-append":
		asMeta = f.asPath + "/.well-known/openid-configuration"
	}
	switch {
	case r.Method == http.MethodGet && p == prmPath:
		res := f.resource
		if res == "" {
			res = f.endpoint()
		}
		md := map[string]any{"resource": res, "authorization_servers": []string{f.asIssuer()}}
		if f.prmScopes != nil {
			md["scopes_supported"] = f.prmScopes
		}
		writeJSON(200, md)
	case r.Method == http.MethodGet && p == asMeta:
		iss := f.issuer
		if iss == "" {
			iss = f.asIssuer()
		}
		md := map[string]any{
			"issuer":                   iss,
			"authorization_endpoint":   f.asIssuer() + "/authorize",
			"token_endpoint":           f.asIssuer() + "/token",
			"response_types_supported": []string{"code"},
			"authorization_response_iss_parameter_supported": f.issSupported,
			"client_id_metadata_document_supported":          f.cimd,
		}
		if !f.noPKCE {
			md["code_challenge_methods_supported"] = []string{"S256"}
		}
		if !f.noDCR {
			md["registration_endpoint"] = f.asIssuer() + "/register"
		}
		if f.asScopes != nil {
			md["scopes_supported"] = f.asScopes
		}
		if f.authMethods != nil {
			md["token_endpoint_auth_methods_supported"] = f.authMethods
		}
		if f.dpop {
			md["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		writeJSON(200, md)
	case r.Method == http.MethodGet && p == f.asPath+"/authorize":
		q := r.URL.Query()
		f.authz = append(f.authz, q)
		f.challenge = q.Get("code_challenge")
		cb, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", 400)
			return
		}
		v := url.Values{"code": {"code-1"}, "state": {q.Get("state")}}
		switch f.iss {
		case "correct":
			v.Set("iss", f.asIssuer())
		case "wrong":
			v.Set("iss", "https://evil.example")
		case "slash":
			v.Set("iss", f.asIssuer()+"/")
		}
		cb.RawQuery = v.Encode()
		http.Redirect(w, r, cb.String(), http.StatusFound)
	case r.Method == http.MethodPost && p == f.asPath+"/token":
		_ = r.ParseForm()
		f.tokenReqs = append(f.tokenReqs, r.PostForm)
		if id, secret, ok := r.BasicAuth(); ok {
			f.basic = append(f.basic, id+":"+secret)
		} else {
			f.basic = append(f.basic, "")
		}
		form := r.PostForm
		scope := form.Get("scope")
		tokenType := "bearer"
		if proof := r.Header.Get("DPoP"); proof != "" {
			f.proofs = append(f.proofs, proof)
			if f.dpopNonce != "" && proofClaims(f.t, proof)["nonce"] != f.dpopNonce {
				w.Header().Set("DPoP-Nonce", f.dpopNonce)
				writeJSON(400, map[string]string{"error": "use_dpop_nonce"})
				return
			}
			tokenType = "DPoP"
		}
		switch form.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(form.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != f.challenge || form.Get("code") != "code-1" {
				writeJSON(400, map[string]string{"error": "invalid_grant"})
				return
			}
			scope = f.authz[len(f.authz)-1].Get("scope")
		case "refresh_token":
			if !strings.HasPrefix(form.Get("refresh_token"), "refresh-") {
				writeJSON(400, map[string]string{"error": "invalid_grant"})
				return
			}
		case "client_credentials":
		case "urn:ietf:params:oauth:grant-type:jwt-bearer":
			if form.Get("assertion") != "wl-jwt" && form.Get("assertion") != "id-jag-1" {
				writeJSON(400, map[string]string{"error": "invalid_grant"})
				return
			}
		default:
			writeJSON(400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		if f.grantedScope != "" {
			scope = f.grantedScope
		}
		f.n++
		resp := map[string]any{"access_token": fmt.Sprintf("tok-%d", f.n), "token_type": tokenType, "expires_in": f.expiresIn}
		if scope != "" {
			resp["scope"] = scope
		}
		if f.refreshTokens {
			resp["refresh_token"] = fmt.Sprintf("refresh-%d", f.n)
		}
		writeJSON(200, resp)
	case r.Method == http.MethodPost && p == f.asPath+"/register" && !f.noDCR:
		var md map[string]any
		_ = json.NewDecoder(r.Body).Decode(&md)
		f.regs = append(f.regs, md)
		writeJSON(201, map[string]any{"client_id": "dcr-client", "token_endpoint_auth_method": "none"})
	default:
		http.NotFound(w, r)
	}
}

func (f *fake) config(mod func(c *Config)) Config {
	c := Config{
		Resource:    f.endpoint(),
		RedirectURL: "http://127.0.0.1:1/callback",
		Authorize:   FollowRedirect(nil),
	}
	if mod != nil {
		mod(&c)
	}
	return c
}

func newAuthorizer(t *testing.T, cfg Config) *Authorizer {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func header(t *testing.T, a *Authorizer) string {
	t.Helper()
	h, err := a.Authorization(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestParseBearer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bearerChallenge
	}{
		{`Bearer resource_metadata="https://rs/.well-known/oauth-protected-resource/mcp"`,
			bearerChallenge{found: true, resourceMetadata: "https://rs/.well-known/oauth-protected-resource/mcp"}},
		{`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://rs/x", error_description="need \"b\""`,
			bearerChallenge{found: true, error: "insufficient_scope", scope: "a b", resourceMetadata: "https://rs/x", errorDescription: `need "b"`}},
		{`Basic realm="x", Bearer error=invalid_token,scope="s"`,
			bearerChallenge{found: true, error: "invalid_token", scope: "s"}},
		{`Basic abc==, bearer scope="s", DPoP algs="ES256", scope="other"`,
			bearerChallenge{found: true, scope: "s"}},
		{`DPoP error="use_dpop_nonce", resource_metadata="https://rs/x"`,
			bearerChallenge{found: true, dpop: true, error: "use_dpop_nonce", resourceMetadata: "https://rs/x"}},
		{`Basic realm="x"`, bearerChallenge{}},
		{``, bearerChallenge{}},
	} {
		if got := parseBearer(tc.in); got != tc.want {
			t.Errorf("parseBearer(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestCodeFlow: the 401 challenge names the PRM; the client discovers
// the AS, registers (DCR, native), runs the code grant with PKCE S256
// (the fake checks the verifier) with the challenge's scope and the
// PRM's resource in both requests, checks iss, and sends the token.
func TestCodeFlow(t *testing.T) {
	f := newFake(t, nil)
	a := newAuthorizer(t, f.config(nil))
	if h := header(t, a); h != "" {
		t.Fatalf("header before any challenge: %q", h)
	}
	www := fmt.Sprintf(`Bearer error="invalid_token", scope="mcp:basic", resource_metadata=%q`, f.prmURL())
	if err := challenge(a, ctxT(t), 401, www, ""); err != nil {
		t.Fatal(err)
	}
	if h := header(t, a); h != "Bearer tok-1" {
		t.Fatalf("header %q", h)
	}
	if len(f.regs) != 1 || f.regs[0]["application_type"] != "native" {
		t.Fatalf("registrations %v", f.regs)
	}
	az, tk := f.authz[0], f.tokenReqs[0]
	if az.Get("code_challenge_method") != "S256" || az.Get("scope") != "mcp:basic" || az.Get("client_id") != "dcr-client" {
		t.Fatalf("authorization request %v", az)
	}
	if az.Get("resource") != f.endpoint() || tk.Get("resource") != f.endpoint() {
		t.Fatalf("resource: authorization %q, token %q", az.Get("resource"), tk.Get("resource"))
	}
	if tk.Get("client_id") != "dcr-client" || f.basic[0] != "" || tk.Get("client_secret") != "" {
		t.Fatalf("token request %v, basic %q (want a public client)", tk, f.basic[0])
	}
	if slices.Contains(f.gets, "/.well-known/oauth-protected-resource") {
		t.Fatalf("root PRM requested: %v", f.gets)
	}
	// A challenge for a token that is no longer current: retry at once.
	if err := challenge(a, ctxT(t), 401, www, "Bearer stale"); err != nil || len(f.authz) != 1 {
		t.Fatalf("stale challenge: %v, %d authorizations", err, len(f.authz))
	}
}

// TestDiscoveryFallbacks: no resource_metadata in the challenge: the
// path-aware PRM URI, then the root one; an issuer with a path: its
// path-aware metadata URIs in order (never the root one), and the PRM's
// resource sent exactly as published (an origin without a slash).
func TestDiscoveryFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name, prmAt, asAt, asPath string
		wantGets                  []string
	}{
		{"path-prm-oauth", "path", "oauth", "", []string{
			"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"}},
		{"root-prm-oidc", "root", "oidc-insert", "", []string{
			"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
			"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"tenant-oauth", "path", "oauth", "/tenant1", []string{
			"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server/tenant1"}},
		{"tenant-oidc-append", "root", "oidc-append", "/tenant1", []string{
			"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
			"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1",
			"/tenant1/.well-known/openid-configuration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(f *fake) { f.prmAt, f.asAt, f.asPath = tc.prmAt, tc.asAt, tc.asPath })
			if tc.prmAt == "root" {
				f.resource = "" // set below, once the URL is known
			}
			a := newAuthorizer(t, f.config(nil))
			if tc.prmAt == "root" {
				f.mu.Lock()
				f.resource = f.srv.URL // the origin, no trailing slash
				f.mu.Unlock()
			}
			if err := challenge(a, ctxT(t), 401, `Bearer error="invalid_token"`, ""); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.gets, tc.wantGets) {
				t.Fatalf("GETs %v, want %v", f.gets, tc.wantGets)
			}
			want := f.endpoint()
			if tc.prmAt == "root" {
				want = f.srv.URL
			}
			if got := f.authz[0].Get("resource"); got != want || f.tokenReqs[0].Get("resource") != want {
				t.Fatalf("resource %q, want %q", got, want)
			}
			if f.authz[0].Has("scope") {
				t.Fatalf("scope sent without any scope known: %v", f.authz[0])
			}
		})
	}
}

// TestClientCredentials: a pre-registered confidential client with the
// client credentials grant, client_secret_basic, the PRM's scopes.
func TestClientCredentials(t *testing.T) {
	f := newFake(t, func(f *fake) { f.prmScopes = []string{"a", "b"}; f.authMethods = []string{"client_secret_basic"} })
	a := newAuthorizer(t, Config{Resource: f.endpoint(), Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3:cr et"})
	if err := challenge(a, ctxT(t), 401, "Bearer resource_metadata=\""+f.prmURL()+"\"", ""); err != nil {
		t.Fatal(err)
	}
	tk := f.tokenReqs[0]
	if tk.Get("grant_type") != "client_credentials" || tk.Get("scope") != "a b" || tk.Get("resource") != f.endpoint() {
		t.Fatalf("token request %v", tk)
	}
	if f.basic[0] != "svc:s3%3Acr+et" || tk.Has("client_secret") || len(f.authz) != 0 || len(f.regs) != 0 {
		t.Fatalf("basic %q, form %v, %d authorizations, %d registrations", f.basic[0], tk, len(f.authz), len(f.regs))
	}
	if h := header(t, a); h != "Bearer tok-1" {
		t.Fatalf("header %q", h)
	}
}

// TestPreRegisteredPost: a pre-registered client authenticates the way
// the AS supports (client_secret_post) and registers nothing; a CIMD URL
// is used as client_id where the AS accepts one.
func TestPreRegisteredPost(t *testing.T) {
	f := newFake(t, func(f *fake) { f.authMethods = []string{"client_secret_post"} })
	a := newAuthorizer(t, f.config(func(c *Config) { c.ClientID, c.ClientSecret = "pre", "sec" }))
	if err := challenge(a, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	tk := f.tokenReqs[0]
	if tk.Get("client_id") != "pre" || tk.Get("client_secret") != "sec" || f.basic[0] != "" || len(f.regs) != 0 {
		t.Fatalf("token request %v, basic %q, %d registrations", tk, f.basic[0], len(f.regs))
	}

	g := newFake(t, func(f *fake) { f.cimd = true })
	b := newAuthorizer(t, g.config(func(c *Config) { c.ClientMetadataURL = "https://client.example/md.json" }))
	if err := challenge(b, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	if g.authz[0].Get("client_id") != "https://client.example/md.json" || len(g.regs) != 0 {
		t.Fatalf("authorization %v, %d registrations", g.authz[0], len(g.regs))
	}
}

// TestRefresh: a token about to expire is refreshed (refresh_token
// grant, same resource) before the next request; a 401 on a token with
// a refresh token refreshes instead of authorizing again; offline_access
// is asked for when the AS lists it.
func TestRefresh(t *testing.T) {
	f := newFake(t, func(f *fake) {
		f.expiresIn = 1 // within the expiry skew: stale at once
		f.refreshTokens = true
		f.prmScopes = []string{"mcp"}
		f.asScopes = []string{"mcp", "offline_access"}
	})
	a := newAuthorizer(t, f.config(func(c *Config) { c.OfflineAccess = true }))
	if err := challenge(a, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	if s := f.authz[0].Get("scope"); s != "mcp offline_access" {
		t.Fatalf("scope %q", s)
	}
	if h := header(t, a); h != "Bearer tok-2" {
		t.Fatalf("header %q, want the refreshed token", h)
	}
	tk := f.tokenReqs[1]
	if tk.Get("grant_type") != "refresh_token" || tk.Get("refresh_token") != "refresh-1" || tk.Get("resource") != f.endpoint() {
		t.Fatalf("refresh request %v", tk)
	}
	if err := challenge(a, ctxT(t), 401, `Bearer error="invalid_token"`, "Bearer tok-2"); err != nil {
		t.Fatal(err)
	}
	if len(f.authz) != 1 || f.tokenReqs[2].Get("grant_type") != "refresh_token" {
		t.Fatalf("%d authorizations, last token request %v", len(f.authz), f.tokenReqs[2])
	}
}

// TestStepUp: 403 insufficient_scope re-authorizes with the union of the
// scopes (SEP-2350); a 403 for scopes already granted fails at once; a
// server granting less than asked is retried at most MaxStepUps times.
func TestStepUp(t *testing.T) {
	f := newFake(t, nil)
	a := newAuthorizer(t, f.config(nil))
	ctx := ctxT(t)
	if err := challenge(a, ctx, 401, `Bearer scope="read"`, ""); err != nil {
		t.Fatal(err)
	}
	if err := challenge(a, ctx, 403, `Bearer error="insufficient_scope", scope="write"`, "Bearer tok-1"); err != nil {
		t.Fatal(err)
	}
	if s := f.authz[1].Get("scope"); s != "read write" {
		t.Fatalf("step-up scope %q", s)
	}
	if err := challenge(a, ctx, 403, `Bearer error="insufficient_scope", scope="write"`, "Bearer tok-2"); err == nil || len(f.authz) != 2 {
		t.Fatalf("403 for a granted scope: %v, %d authorizations", err, len(f.authz))
	}
	if err := challenge(a, ctx, 403, `Bearer error="invalid_token"`, "Bearer tok-2"); err == nil {
		t.Fatal("a 403 without insufficient_scope was taken as a step-up")
	}

	g := newFake(t, func(f *fake) { f.grantedScope = "read" })
	b := newAuthorizer(t, g.config(nil))
	if err := challenge(b, ctx, 401, `Bearer scope="read"`, ""); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		err = challenge(b, ctx, 403, `Bearer error="insufficient_scope", scope="admin"`, fmt.Sprintf("Bearer tok-%d", i+1))
	}
	if err == nil || len(g.authz) != 1+DefaultMaxStepUps {
		t.Fatalf("err %v after %d authorizations, want %d", err, len(g.authz), 1+DefaultMaxStepUps)
	}
}

// TestRefusals: what the client must not go on with; each fails the
// challenge before the code reaches the token endpoint (or before
// authorizing at all).
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(f *fake)
		authorize AuthorizeFunc
		want      string
		reached   bool // the authorization endpoint was reached
	}{
		{"iss-wrong", func(f *fake) { f.iss = "wrong" }, nil, "mix-up", true},
		{"iss-normalized", func(f *fake) { f.iss = "slash" }, nil, "mix-up", true},
		{"iss-missing", func(f *fake) { f.iss = "omit" }, nil, "lacks the iss", true},
		{"iss-unexpected", func(f *fake) { f.iss = "wrong"; f.issSupported = false }, nil, "mix-up", true},
		{"metadata-issuer", func(f *fake) { f.issuer = "https://attacker.example" }, nil, "has issuer", false},
		{"resource-mismatch", func(f *fake) { f.resource = "https://evil.example/mcp" }, nil, "is for", false},
		{"no-pkce", func(f *fake) { f.noPKCE = true }, nil, "PKCE", false},
		{"no-registration", func(f *fake) { f.noDCR = true }, nil, "no client registration", false},
		{"state", nil, func(ctx context.Context, u string) (*url.URL, error) {
			cb, err := FollowRedirect(nil)(ctx, u)
			if err == nil {
				q := cb.Query()
				q.Set("state", "forged")
				cb.RawQuery = q.Encode()
			}
			return cb, err
		}, "state", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.setup)
			a := newAuthorizer(t, f.config(func(c *Config) {
				if tc.authorize != nil {
					c.Authorize = tc.authorize
				}
			}))
			err := challenge(a, ctxT(t), 401, "Bearer resource_metadata=\""+f.prmURL()+"\"", "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if len(f.tokenReqs) != 0 || (len(f.authz) > 0) != tc.reached {
				t.Fatalf("%d token requests, %d authorization requests", len(f.tokenReqs), len(f.authz))
			}
			if h := header(t, a); h != "" {
				t.Fatalf("header %q after a refusal", h)
			}
		})
	}
}

// TestMigration: when the PRM names another authorization server, the
// client registers there and does not carry the old client id over.
func TestMigration(t *testing.T) {
	f := newFake(t, nil)
	g := newFake(t, nil)
	a := newAuthorizer(t, f.config(nil))
	if err := challenge(a, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	a.clients[f.asIssuer()].id = "as1-client"
	a.mu.Unlock()
	// The resource now points at g's AS (and its PRM lives on g).
	f.mu.Lock()
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, f.endpoint(), g.asIssuer())
			return
		}
		http.NotFound(w, r)
	})
	f.mu.Unlock()
	if err := challenge(a, ctxT(t), 401, `Bearer error="invalid_token"`, "Bearer tok-1"); err != nil {
		t.Fatal(err)
	}
	if len(g.regs) != 1 || g.authz[0].Get("client_id") != "dcr-client" || g.tokenReqs[0].Get("client_id") != "dcr-client" {
		t.Fatalf("new AS: %d registrations, authorization %v", len(g.regs), g.authz)
	}
}

func TestNewChecks(t *testing.T) {
	for _, c := range []Config{
		{},
		{Resource: "ftp://x/mcp", RedirectURL: "http://127.0.0.1/cb", Authorize: FollowRedirect(nil)},
		{Resource: "http://x/mcp"}, // code grant without Authorize
		{Resource: "http://x/mcp", Grant: GrantClientCredentials, ClientID: "a"},
		{Resource: "http://x/mcp", Grant: GrantClientCredentials, ClientID: "a", ClientSecret: "b", TokenAuthMethod: "private_key_jwt"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

// TestPrivateKeyJWT: private_key_jwt client authentication (RFC 7523
// §2.2): an ES256 JWT signed with the client's key, issued by and about
// the client, for the authorization server's issuer.
func TestPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	signer, err := ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	f := newFake(t, func(f *fake) { f.authMethods = []string{"private_key_jwt"} })
	a := newAuthorizer(t, Config{Resource: f.endpoint(), Grant: GrantClientCredentials, ClientID: "svc", PrivateKey: signer})
	if err := challenge(a, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	tk := f.tokenReqs[0]
	if tk.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || f.basic[0] != "" {
		t.Fatalf("token request %v", tk)
	}
	parts := strings.Split(tk.Get("client_assertion"), ".")
	if len(parts) != 3 {
		t.Fatalf("assertion %q", tk.Get("client_assertion"))
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(&key.PublicKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("assertion signature does not verify")
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var h, c map[string]any
	_ = json.Unmarshal(hdr, &h)
	_ = json.Unmarshal(body, &c)
	if h["alg"] != "ES256" || c["iss"] != "svc" || c["sub"] != "svc" || c["aud"] != f.asIssuer() || c["jti"] == "" {
		t.Fatalf("header %v, claims %v", h, c)
	}
}

// TestJWTBearer: the JWT bearer grant with a workload JWT, and with an
// ID-JAG an identity provider issued in a token exchange for the
// authorization server and resource (enterprise-managed authorization).
func TestJWTBearer(t *testing.T) {
	f := newFake(t, nil)
	a := newAuthorizer(t, Config{Resource: f.endpoint(), Grant: GrantJWTBearer,
		Assertion: func(context.Context, string, string) (string, error) { return "wl-jwt", nil }})
	if err := challenge(a, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	if tk := f.tokenReqs[0]; tk.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || tk.Has("client_id") || len(f.regs) != 0 {
		t.Fatalf("token request %v, %d registrations", tk, len(f.regs))
	}

	var exchange url.Values
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		exchange = r.PostForm
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"id-jag-1","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`)
	}))
	t.Cleanup(idp.Close)
	g := newFake(t, func(f *fake) { f.authMethods = []string{"client_secret_basic"} })
	b := newAuthorizer(t, Config{Resource: g.endpoint(), Grant: GrantJWTBearer, ClientID: "c", ClientSecret: "s",
		Assertion: IDJAGAssertion(nil, idp.URL+"/token", "idp-client", func(context.Context) (string, error) { return "id-token", nil })})
	if err := challenge(b, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	if exchange.Get("subject_token") != "id-token" || exchange.Get("audience") != g.asIssuer() || exchange.Get("resource") != g.endpoint() ||
		exchange.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" || exchange.Get("client_id") != "idp-client" {
		t.Fatalf("token exchange %v", exchange)
	}
	if tk := g.tokenReqs[0]; tk.Get("assertion") != "id-jag-1" || g.basic[0] != "c:s" {
		t.Fatalf("token request %v, basic %q", tk, g.basic[0])
	}
}

// TestLoopbackAuthorize: the code grant with the redirect caught on a
// loopback listener (the user agent here: an HTTP client that follows
// the authorization server's redirect).
func TestLoopbackAuthorize(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/cb"
	_ = ln.Close()
	f := newFake(t, nil)
	shown := make(chan string, 1)
	a := newAuthorizer(t, f.config(func(c *Config) {
		c.RedirectURL = redirect
		c.Authorize = LoopbackAuthorize(redirect, func(u string) {
			shown <- u
			go func() {
				if resp, err := http.Get(u); err == nil {
					resp.Body.Close()
				}
			}()
		})
	}))
	if err := challenge(a, ctxT(t), 401, "", ""); err != nil {
		t.Fatal(err)
	}
	if u := <-shown; !strings.HasPrefix(u, f.asIssuer()+"/authorize?") {
		t.Fatalf("shown %q", u)
	}
	if h := header(t, a); h != "Bearer tok-1" {
		t.Fatalf("header %q", h)
	}
	if _, err := LoopbackAuthorize("http://example.com:80/cb", nil)(ctxT(t), "x"); err == nil {
		t.Fatal("a non-loopback redirect was accepted")
	}
}

// challenge hands a challenge with this WWW-Authenticate value to a.
func challenge(a *Authorizer, ctx context.Context, status int, www, sent string) error {
	h := http.Header{}
	if www != "" {
		h.Set("WWW-Authenticate", www)
	}
	return a.Challenge(ctx, status, h, sent)
}

// proofClaims verifies a DPoP proof (typ, ES256 signature by the jwk of
// its header) and returns its claims.
func proofClaims(t *testing.T, proof string) map[string]any {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Errorf("proof %q", proof)
		return nil
	}
	enc := base64.RawURLEncoding
	var h struct {
		Typ, Alg string
		JWK      struct{ Kty, Crv, X, Y, D string }
	}
	raw, _ := enc.DecodeString(parts[0])
	_ = json.Unmarshal(raw, &h)
	x, _ := enc.DecodeString(h.JWK.X)
	y, _ := enc.DecodeString(h.JWK.Y)
	point := append([]byte{4}, append(pad32(x), pad32(y)...)...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		t.Errorf("proof key: %v", err)
		return nil
	}
	sig, _ := enc.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if h.Typ != "dpop+jwt" || h.Alg != "ES256" || h.JWK.Crv != "P-256" || h.JWK.D != "" || len(sig) != 64 ||
		!ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Errorf("proof header %+v does not verify", h)
		return nil
	}
	var c map[string]any
	raw, _ = enc.DecodeString(parts[1])
	_ = json.Unmarshal(raw, &c)
	return c
}

// TestDPoP: with Config.DPoP and an AS that supports it, the token
// request carries a proof (retried once with the nonce the AS asks for),
// the token uses the DPoP scheme, and Proof makes a fresh proof per MCP
// request with ath and the MCP server's nonce once it asked for one.
func TestDPoP(t *testing.T) {
	f := newFake(t, func(f *fake) { f.dpop, f.dpopNonce = true, "as-nonce" })
	a := newAuthorizer(t, f.config(func(c *Config) { c.DPoP = true }))
	ctx := ctxT(t)
	if err := challenge(a, ctx, 401, `DPoP resource_metadata="`+f.prmURL()+`"`, ""); err != nil {
		t.Fatal(err)
	}
	if len(f.proofs) != 2 || len(f.tokenReqs) != 2 {
		t.Fatalf("%d proofs, %d token requests (want a retry with the nonce)", len(f.proofs), len(f.tokenReqs))
	}
	c := proofClaims(t, f.proofs[1])
	if c["htm"] != "POST" || c["htu"] != f.asIssuer()+"/token" || c["nonce"] != "as-nonce" || c["ath"] != nil {
		t.Fatalf("token request proof %v", c)
	}
	h := header(t, a)
	if h != "DPoP tok-1" {
		t.Fatalf("header %q", h)
	}
	p1, _ := a.Proof("POST", f.endpoint(), h)
	p2, _ := a.Proof("POST", f.endpoint(), h)
	c1, c2 := proofClaims(t, p1), proofClaims(t, p2)
	sum := sha256.Sum256([]byte("tok-1"))
	if c1["jti"] == c2["jti"] || c1["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) || c1["htu"] != f.endpoint() || c1["nonce"] != nil {
		t.Fatalf("proofs %v %v", c1, c2)
	}
	nonce := http.Header{"Www-Authenticate": {`DPoP error="use_dpop_nonce"`}, "Dpop-Nonce": {"rs-1"}}
	if err := a.Challenge(ctx, 401, nonce, h); err != nil {
		t.Fatal(err)
	}
	p3, _ := a.Proof("POST", f.endpoint(), h)
	if c3 := proofClaims(t, p3); c3["nonce"] != "rs-1" {
		t.Fatalf("proof after the nonce challenge %v", c3)
	}
	if err := a.Challenge(ctx, 401, nonce, h); err == nil {
		t.Fatal("the same nonce asked for twice was accepted")
	}
	if len(f.authz) != 1 {
		t.Fatalf("%d authorizations", len(f.authz))
	}

	// Without DPoP support at the AS: Bearer, no proofs.
	g := newFake(t, nil)
	b := newAuthorizer(t, g.config(func(c *Config) { c.DPoP = true }))
	if err := challenge(b, ctx, 401, "", ""); err != nil {
		t.Fatal(err)
	}
	if h := header(t, b); h != "Bearer tok-1" || len(g.proofs) != 0 {
		t.Fatalf("header %q, %d proofs", h, len(g.proofs))
	}
}

// pad32 left-pads a P-256 coordinate to 32 bytes.
func pad32(b []byte) []byte {
	if len(b) >= 32 {
		return b
	}
	return append(make([]byte, 32-len(b)), b...)
}
