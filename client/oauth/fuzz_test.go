package oauth

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseBearer: parseBearer never panics on any WWW-Authenticate value,
// and reads back what a server writes: a Bearer (or DPoP) challenge whose
// auth-params are quoted-strings with every '"' and '\' escaped (RFC 9110
// §5.6.4), after another scheme's challenge, gives the values as written.
func FuzzParseBearer(f *testing.F) {
	for _, s := range [][3]string{
		{`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://rs.example/.well-known/oauth-protected-resource"`, "a b", "https://rs.example/m"},
		{`Basic realm="x", Bearer realm="mcp"`, "", ""},
		{`DPoP algs="ES256", error="use_dpop_nonce"`, "files:read", `https://rs.example/"q"`},
		{`Bearer token68abc==, scope=unquoted`, `a\b`, ""},
		{`Bearer scope="unterminated`, "", ""},
		{`Negotiate a87421000492aa874209af8bc028, Bearer error=invalid_token`, "", ""},
		{`bearer SCOPE="x" , , ,RESOURCE_METADATA="y"`, "x", "y"},
		{`Bearer error="a\"b\\c"`, "", ""},
		{"\x00=\"\",Bearer", "", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	quote := func(s string) string {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
	}
	f.Fuzz(func(t *testing.T, h, scope, meta string) {
		bc := parseBearer(h)
		if bc.dpop && !bc.found {
			t.Fatalf("parseBearer(%q): DPoP without a challenge", h)
		}
		if !bc.found && (bc.scope != "" || bc.resourceMetadata != "" || bc.error != "") {
			t.Fatalf("parseBearer(%q): values %+v without a Bearer challenge", h, bc)
		}
		if parseBearer(h) != bc {
			t.Fatalf("parseBearer(%q) is not deterministic", h)
		}
		w := `Basic realm="a, Bearer scope=\"no\"", Bearer error="insufficient_scope", scope=` + quote(scope) +
			`, resource_metadata=` + quote(meta) + `, Bearer scope="second"`
		got := parseBearer(w)
		if !got.found || got.dpop || got.error != "insufficient_scope" || got.scope != scope || got.resourceMetadata != meta {
			t.Fatalf("parseBearer(%q) = %+v; want scope %q, resource_metadata %q", w, got, scope, meta)
		}
	})
}

// FuzzResourceCovers: the resource identifier check of RFC 9728 §3.3 never
// panics; what it accepts has the endpoint's scheme and authority (ports
// made explicit), no fragment, and a path the endpoint's path is or lies
// under (segment-wise: "/mcp" never covers "/mcpx"); and an endpoint always
// covers itself.
func FuzzResourceCovers(f *testing.F) {
	for _, s := range [][2]string{
		{"https://rs.example/mcp", "https://rs.example/mcp"},
		{"https://rs.example", "https://rs.example:443/mcp/"},
		{"https://rs.example/mc", "https://rs.example/mcp"},
		{"HTTPS://RS.example:443/", "https://rs.example/mcp"},
		{"https://rs.example/mcp#f", "https://rs.example/mcp"},
		{"http://rs.example/mcp", "https://rs.example/mcp"},
		{"https://rs.example/a%2Fb", "https://rs.example/a/b"},
		{"https://user@rs.example/mcp", "https://rs.example/mcp"},
		{"https://[::1]:8080/mcp", "https://[::1]:8080/mcp/x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, res, endpoint string) {
		ep, err := url.Parse(endpoint)
		if err != nil || ep.Host == "" || (ep.Scheme != "http" && ep.Scheme != "https") {
			return
		}
		ep.Fragment, ep.RawFragment = "", "" // as New does
		if resourceCovers(res, ep) {
			r, _ := url.Parse(res)
			if r.Fragment != "" || !strings.EqualFold(r.Scheme, ep.Scheme) || !strings.EqualFold(hostPort(r), hostPort(ep)) {
				t.Fatalf("resourceCovers(%q, %q) = true for another origin", res, ep)
			}
			rp := strings.TrimSuffix(r.EscapedPath(), "/")
			ep := strings.TrimSuffix(ep.EscapedPath(), "/")
			if rp != "" && ep != rp && !strings.HasPrefix(ep, rp+"/") {
				t.Fatalf("resourceCovers(%q, %q) = true for a path that is not an ancestor", res, ep)
			}
		}
		if self := ep.String(); !resourceCovers(self, ep) {
			t.Fatalf("endpoint %q does not cover itself", self)
		}
	})
}

// FuzzServerMetadataURLs: the well-known URLs built from an issuer (RFC
// 8414 §3.1) never panic, are only built for an http(s) issuer with a host
// and no query or fragment, and all stay on the issuer's origin.
func FuzzServerMetadataURLs(f *testing.F) {
	for _, s := range []string{"https://as.example", "https://as.example/", "https://as.example/tenant/1", "https://as.example?x",
		"https://as.example#f", "ftp://as.example", "https:///p", "https://as.example/a%2F..%2Fb", "https://u:p@as.example:8443/x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, issuer string) {
		urls, err := serverMetadataURLs(issuer)
		if err != nil {
			return
		}
		is, _ := url.Parse(issuer)
		for _, u := range urls {
			p, perr := url.Parse(u)
			if perr != nil {
				t.Fatalf("issuer %q: metadata URL %q does not parse: %v", issuer, u, perr)
			}
			if p.Scheme != is.Scheme || p.Host != is.Host || p.RawQuery != "" || p.Fragment != "" || p.User != nil {
				t.Fatalf("issuer %q: metadata URL %q is not on the issuer's origin", issuer, u)
			}
			if !strings.Contains(p.EscapedPath(), "/.well-known/") {
				t.Fatalf("issuer %q: metadata URL %q is not a well-known URI", issuer, u)
			}
		}
	})
}

// bodyTransport answers every request with status and body, no network.
type bodyTransport struct {
	status int
	body   string
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: b.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(b.body)), Request: r}, nil
}

// FuzzMetadataDocuments feeds arbitrary protected-resource (RFC 9728) and
// authorization-server (RFC 8414) metadata documents to the discovery
// steps, as a hostile or broken server would serve them: no panic, and a
// document is taken only when it names an authorization server and a
// resource that covers the endpoint, or the issuer asked for exactly
// and a token endpoint.
func FuzzMetadataDocuments(f *testing.F) {
	const issuer = "https://as.example/t"
	for _, s := range []string{
		`{"resource":"https://rs.example/mcp","authorization_servers":["https://as.example/t"],"scopes_supported":["a"]}`,
		`{"resource":"https://evil.example/mcp","authorization_servers":["https://as.example/t"]}`,
		`{"authorization_servers":[]}`,
		`{"issuer":"https://as.example/t","token_endpoint":"https://as.example/t/token","authorization_endpoint":"https://as.example/t/a"}`,
		`{"issuer":"https://as.example/t/","token_endpoint":"x"}`,
		`{"issuer":"https://as.example/t","token_endpoint":""}`,
		`{"issuer":"https://as.example/t","resource":"https://rs.example","authorization_servers":["x"],"token_endpoint":"t"}`,
		`[]`, `null`, `{"resource":1}`, `{"Issuer":"https://as.example/t","TOKEN_ENDPOINT":"t"}`, "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		a, err := New(Config{Resource: "https://rs.example/mcp", Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s",
			HTTPClient: &http.Client{Transport: bodyTransport{200, doc}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if rm, err := a.discoverResource(ctx, ""); err == nil {
			if len(rm.AuthorizationServers) == 0 || (rm.Resource != "" && !resourceCovers(rm.Resource, a.endpoint)) {
				t.Fatalf("resource metadata %q taken: %+v", doc, rm)
			}
		}
		if sm, err := a.discoverServer(ctx, issuer); err == nil {
			if sm.Issuer != issuer || sm.TokenEndpoint == "" {
				t.Fatalf("server metadata %q taken: %+v", doc, sm)
			}
		}
		_ = oauthError([]byte(doc)) // the error body of a token response: never panics
	})
}
