package auth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// signingKey is a key of the test authorization server.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newRSAKey(t testing.TB, kid string) *signingKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &signingKey{kid: kid, alg: jose.RS256, priv: k}
}

func newECKey(t testing.TB, kid string) *signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signingKey{kid: kid, alg: jose.ES256, priv: k}
}

func (k *signingKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// sign signs claims with k as a JWT access token (typ at+jwt, RFC 9068).
func (k *signingKey) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if k.kid != "" {
		opts = opts.WithHeader("kid", k.kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testAS is an OAuth authorization server on loopback: RFC 8414 metadata,
// a key set it can rotate, a client credentials token endpoint that
// honours resource (RFC 8707) and scope, and an introspection endpoint for
// the opaque tokens it is told about.
type testAS struct {
	t   testing.TB
	srv *httptest.Server

	clientID, secret string // the pre-registered client
	rsID, rsSecret   string // the resource server, at the introspection endpoint

	mu     sync.Mutex
	served []*signingKey // in the key set
	signer *signingKey   // signs issued tokens
	opaque map[string]map[string]any

	down atomic.Bool // every request answered 503
	// jwksGate, when set, holds each /jwks request (after a send on
	// jwksEntered, when set) until it is closed or the client leaves.
	jwksGate, jwksEntered chan struct{}
	// introspectGate and introspectEntered do the same for /introspect.
	introspectGate, introspectEntered chan struct{}
	jwksHits                          atomic.Int64
	tokens                            atomic.Int64
	introspect                        atomic.Int64
}

func newTestAS(t testing.TB, key *signingKey) *testAS {
	a := &testAS{t: t, clientID: "agent", secret: "s3cret", rsID: "mcp-rs", rsSecret: "rs-secret",
		served: []*signingKey{key}, signer: key, opaque: map[string]map[string]any{}}
	a.srv = httptest.NewServer(http.HandlerFunc(a.handle))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *testAS) issuer() string { return a.srv.URL }

// rotate serves key too and signs with it from now on.
func (a *testAS) rotate(key *signingKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.served = append(a.served, key)
	a.signer = key
}

func (a *testAS) addOpaque(tok string, resp map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.opaque[tok] = resp
}

func (a *testAS) handle(w http.ResponseWriter, r *http.Request) {
	writeJSON := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	if a.down.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(map[string]any{
			"issuer":                                a.issuer(),
			"token_endpoint":                        a.issuer() + "/token",
			"jwks_uri":                              a.issuer() + "/jwks",
			"introspection_endpoint":                a.issuer() + "/introspect",
			"grant_types_supported":                 []string{"client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
			"scopes_supported":                      []string{"mcp", "admin"},
		})
	case "/jwks":
		a.jwksHits.Add(1)
		a.mu.Lock()
		gate, entered := a.jwksGate, a.jwksEntered
		a.mu.Unlock()
		if gate != nil {
			if entered != nil {
				entered <- struct{}{}
			}
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		a.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range a.served {
			set.Keys = append(set.Keys, k.jwk())
		}
		a.mu.Unlock()
		writeJSON(set)
	case "/token":
		id, secret, ok := r.BasicAuth()
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		if !ok || id != a.clientID || secret != a.secret {
			w.WriteHeader(401)
			writeJSON(map[string]string{"error": "invalid_client"})
			return
		}
		if r.PostFormValue("grant_type") != "client_credentials" || r.PostFormValue("resource") == "" {
			w.WriteHeader(400)
			writeJSON(map[string]string{"error": "invalid_request"})
			return
		}
		a.tokens.Add(1)
		scope := r.PostFormValue("scope")
		a.mu.Lock()
		k := a.signer
		a.mu.Unlock()
		now := time.Now()
		tok := k.sign(a.t, map[string]any{
			"iss": a.issuer(), "sub": "agent-42", "aud": r.PostFormValue("resource"), "client_id": id,
			"scope": scope, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "t" + now.Format("150405.000000"),
		})
		writeJSON(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": scope})
	case "/introspect":
		id, secret, ok := r.BasicAuth()
		if !ok || id != a.rsID || secret != a.rsSecret {
			w.WriteHeader(401)
			return
		}
		a.introspect.Add(1)
		a.mu.Lock()
		gate, entered := a.introspectGate, a.introspectEntered
		a.mu.Unlock()
		if gate != nil {
			if entered != nil {
				entered <- struct{}{}
			}
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		a.mu.Lock()
		resp, ok := a.opaque[r.PostFormValue("token")]
		a.mu.Unlock()
		if !ok {
			resp = map[string]any{"active": false}
		}
		writeJSON(resp)
	default:
		http.NotFound(w, r)
	}
}

// rawToken assembles a compact JWS from a header and claims and a
// signature function over the signing input (for forged tokens).
func rawToken(t testing.TB, header, claims map[string]any, sign func(input []byte) []byte) string {
	t.Helper()
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := b64(h) + "." + b64(c)
	return input + "." + b64(sign([]byte(input)))
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

var cryptoSHA256 = crypto.SHA256
