// Package oauth is the MCP authorization flow for HTTP clients (OAuth 2.1,
// MCP authorization 2025-11-25 / 2026-07-28): an Authorizer that plugs
// into streamhttp.Config.Auth (target.Config.OAuth sets it up).
//
// On the first 401 from the MCP server it discovers the Protected
// Resource Metadata (RFC 9728: the resource_metadata of the
// WWW-Authenticate challenge, else the path-aware then the root
// well-known URI) and checks that it describes the server; then the
// authorization server's metadata (RFC 8414 and OpenID Connect discovery,
// path-aware, issuer compared exactly). It picks a client identity: a
// pre-registered client (Config.ClientID), a Client ID Metadata Document
// URL when the server accepts one (Config.ClientMetadataURL), else
// dynamic client registration (RFC 7591). It obtains a token with the
// authorization code grant and PKCE S256 (Config.Authorize shows the
// authorization URL to the user, or follows it headlessly, and returns
// the redirect; state and RFC 9207 iss are checked) or the client
// credentials grant, always naming the resource (RFC 8707), with the
// token endpoint authentication the server supports
// (client_secret_basic, client_secret_post, none). Scopes: those of the
// challenge, else the resource's scopes_supported, else none; on a 403
// insufficient_scope, the union of what was granted and what is asked
// (step-up), a bounded number of times. A token near expiry is refreshed
// with its refresh token; a token the server refuses is refreshed, or
// the flow runs again. Credentials are kept per authorization server: when
// the resource names another one, the client registers again. Other
// grants: client credentials (a secret, or a private key: private_key_jwt)
// and the JWT bearer grant (a workload identity token, or an ID-JAG from
// an enterprise identity provider: IDJAGAssertion). With Config.DPoP,
// tokens are bound to a key of the Authorizer (RFC 9449) where the
// authorization server supports it.
//
// The token is sent in the Authorization header of every request
// ("Bearer <token>", or "DPoP <token>" with a fresh proof), never in a
// URL.
package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Grant is the OAuth grant an Authorizer uses.
type Grant int

const (
	// GrantAuthorizationCode: the authorization code grant with PKCE, a
	// user (or Config.Authorize) approving at the authorization endpoint.
	GrantAuthorizationCode Grant = iota
	// GrantClientCredentials: the client credentials grant, for a
	// confidential client acting on its own behalf (pre-registered
	// Config.ClientID and ClientSecret).
	GrantClientCredentials
	// GrantJWTBearer: the JWT bearer grant (RFC 7523 §2.1), for a
	// workload presenting a JWT from its identity provider
	// (Config.Assertion), as in workload identity federation.
	GrantJWTBearer
)

// AuthorizeFunc sends the user agent to authURL (the authorization
// request) and returns the URL the authorization server redirected it to
// (Config.RedirectURL with code, state and perhaps iss or error). A
// desktop client opens a browser and waits on its redirect listener;
// FollowRedirect does it headlessly.
type AuthorizeFunc func(ctx context.Context, authURL string) (*url.URL, error)

// Defaults for Config fields.
const (
	DefaultMaxStepUps = 2
	DefaultClientName = "mcpwire"
	// expirySkew: a token this close to expiry is refreshed before use.
	expirySkew = 30 * time.Second
)

// Config configures an Authorizer.
type Config struct {
	// Resource is the MCP endpoint URL the tokens are for. Required
	// (target.Open fills it in).
	Resource string
	// Grant: GrantAuthorizationCode (default) or GrantClientCredentials.
	Grant Grant
	// ClientID and ClientSecret are a pre-registered client (secret
	// empty: a public client). Issuer, when set, limits them to that
	// authorization server; another one gets a registration of its own.
	ClientID     string
	ClientSecret string
	Issuer       string
	// PrivateKey, for a pre-registered client, authenticates it at the
	// token endpoint with a signed JWT (private_key_jwt, RFC 7523 §2.2)
	// instead of a secret. ParsePrivateKey reads a PEM key.
	PrivateKey crypto.Signer
	// TokenAuthMethod is how the pre-registered client authenticates at
	// the token endpoint: client_secret_basic, client_secret_post,
	// private_key_jwt or none. "": private_key_jwt with a PrivateKey,
	// else the first of the secret methods the server supports (none
	// without a secret).
	TokenAuthMethod string
	// Assertion returns the JWT GrantJWTBearer presents to the
	// authorization server issuer for the resource (called for each token
	// request): a workload identity token, or an identity assertion
	// authorization grant from the user's identity provider
	// (IDJAGAssertion). Required with it.
	Assertion func(ctx context.Context, issuer, resource string) (string, error)
	// ClientMetadataURL is the HTTPS URL of this client's Client ID
	// Metadata Document, used as client_id when the authorization server
	// advertises client_id_metadata_document_supported.
	ClientMetadataURL string
	// ClientName is the client_name of a dynamic registration. Default
	// "mcpwire".
	ClientName string
	// RedirectURL is the redirect_uri of the authorization code grant.
	// Required with it.
	RedirectURL string
	// Authorize runs the user-agent part of the authorization code grant.
	// Required with it.
	Authorize AuthorizeFunc
	// Scopes, when set, are requested whatever the server suggests.
	Scopes []string
	// DPoP binds the tokens to a key of this Authorizer (RFC 9449, ES256)
	// when the authorization server supports it
	// (dpop_signing_alg_values_supported): token requests and every MCP
	// request carry a proof, the token the DPoP scheme; server nonces are
	// honoured. Otherwise, or without DPoP, tokens are Bearer.
	DPoP bool
	// OfflineAccess requests offline_access (a refresh token) when the
	// authorization server lists it in scopes_supported.
	OfflineAccess bool
	// MaxStepUps bounds the re-authorizations for 403 insufficient_scope
	// that ask for the same set of scopes (an authorization server that
	// keeps granting less than asked). Default 2; negative: none.
	MaxStepUps int
	// HTTPClient makes the metadata, registration and token requests.
	// Nil: a client with a 10 s timeout.
	HTTPClient *http.Client
	// Logger receives debug logs of the flow (never a secret). Nil
	// discards them.
	Logger *slog.Logger
}

// token is an access token and what came with it.
type token struct {
	header  string // "Bearer <access token>"
	refresh string
	expiry  time.Time // zero: unknown
	scopes  []string  // granted (or requested when the response says nothing)
	issuer  string
}

func (t *token) fresh(now time.Time) bool {
	return t.expiry.IsZero() || now.Add(expirySkew).Before(t.expiry)
}

// client is this client's identity at one authorization server.
type client struct {
	id, secret string
	method     string // token endpoint authentication
}

// Authorizer implements streamhttp.Authorizer with the MCP authorization
// flow. Safe for concurrent use; flows run one at a time.
type Authorizer struct {
	cfg      Config
	endpoint *url.URL
	hc       *http.Client
	log      *slog.Logger

	cur atomic.Pointer[token]

	dpopKey *ecdsa.PrivateKey      // Config.DPoP
	rsNonce atomic.Pointer[string] // the MCP server's last DPoP-Nonce

	mu        sync.Mutex // one flow at a time; guards the fields below
	clients   map[string]*client
	servers   map[string]*ServerMetadata
	resource  *ResourceMetadata
	requested []string       // scopes asked for in the last authorization
	stepUps   map[string]int // step-up authorizations per scope set asked
	asNonce   map[string]string
}

// New checks cfg and returns an Authorizer. Nothing is fetched yet: the
// flow starts at the server's first challenge.
func New(cfg Config) (*Authorizer, error) {
	if cfg.Resource == "" {
		return nil, errors.New("oauth: Config.Resource (the MCP endpoint URL) is required")
	}
	ep, err := url.Parse(cfg.Resource)
	if err != nil || ep.Host == "" || (ep.Scheme != "http" && ep.Scheme != "https") {
		return nil, fmt.Errorf("oauth: Config.Resource %q is not an http(s) URL", cfg.Resource)
	}
	ep.Fragment, ep.RawFragment = "", ""
	switch cfg.Grant {
	case GrantAuthorizationCode:
		if cfg.Authorize == nil || cfg.RedirectURL == "" {
			return nil, errors.New("oauth: the authorization code grant needs Config.Authorize and Config.RedirectURL")
		}
		if _, err := url.Parse(cfg.RedirectURL); err != nil {
			return nil, fmt.Errorf("oauth: Config.RedirectURL: %w", err)
		}
	case GrantClientCredentials:
		if cfg.ClientID == "" || (cfg.ClientSecret == "" && cfg.PrivateKey == nil) {
			return nil, errors.New("oauth: the client credentials grant needs Config.ClientID and Config.ClientSecret or PrivateKey")
		}
	case GrantJWTBearer:
		if cfg.Assertion == nil {
			return nil, errors.New("oauth: the JWT bearer grant needs Config.Assertion")
		}
	default:
		return nil, fmt.Errorf("oauth: unknown grant %d", cfg.Grant)
	}
	switch cfg.TokenAuthMethod {
	case "", "client_secret_basic", "client_secret_post", "none":
	case "private_key_jwt":
		if cfg.PrivateKey == nil {
			return nil, errors.New("oauth: private_key_jwt needs Config.PrivateKey")
		}
	default:
		return nil, fmt.Errorf("oauth: unsupported token endpoint auth method %q", cfg.TokenAuthMethod)
	}
	if cfg.PrivateKey != nil && jwtAlg(cfg.PrivateKey) == "" {
		return nil, errors.New("oauth: Config.PrivateKey: ECDSA (P-256, P-384, P-521) or RSA keys only")
	}
	if cfg.PrivateKey != nil && cfg.TokenAuthMethod == "" {
		cfg.TokenAuthMethod = "private_key_jwt"
	}
	if cfg.ClientName == "" {
		cfg.ClientName = DefaultClientName
	}
	if cfg.MaxStepUps == 0 {
		cfg.MaxStepUps = DefaultMaxStepUps
	}
	a := &Authorizer{
		cfg: cfg, endpoint: ep, hc: cfg.HTTPClient, log: cfg.Logger,
		clients: map[string]*client{}, servers: map[string]*ServerMetadata{},
		stepUps: map[string]int{}, asNonce: map[string]string{},
	}
	if cfg.DPoP {
		if a.dpopKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, fmt.Errorf("oauth: DPoP key: %w", err)
		}
	}
	if a.hc == nil {
		a.hc = &http.Client{Timeout: 10 * time.Second}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a, nil
}

// Authorization returns "Bearer <token>" for the next request, "" while
// no token was obtained. A token about to expire is refreshed first when
// it came with a refresh token.
func (a *Authorizer) Authorization(ctx context.Context) (string, error) {
	t := a.cur.Load()
	if t == nil {
		return "", nil
	}
	if t.fresh(time.Now()) || t.refresh == "" {
		return t.header, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t2 := a.cur.Load(); t2 != t {
		if t2 == nil {
			return "", nil
		}
		return t2.header, nil
	}
	if err := a.refresh(ctx, t); err != nil {
		a.log.Debug("oauth: refresh failed; the next challenge authorizes again", "err", err)
		return t.header, nil // the server will challenge it
	}
	return a.cur.Load().header, nil
}

// Challenge answers a 401 (no token, or one the server refused; a DPoP
// nonce to use) or a 403 insufficient_scope (step-up) from the MCP
// server.
func (a *Authorizer) Challenge(ctx context.Context, status int, header http.Header, sent string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.cur.Load()
	if cur != nil && cur.header != sent {
		return nil // another request already got a new token
	}
	bc := parseBearer(strings.Join(header.Values("WWW-Authenticate"), ", "))
	switch status {
	case http.StatusUnauthorized:
		if n := header.Get("DPoP-Nonce"); bc.error == "use_dpop_nonce" && n != "" && a.dpopKey != nil {
			if old := a.rsNonce.Load(); old != nil && *old == n {
				return errors.New("oauth: the server asks again for the DPoP nonce it was sent")
			}
			a.rsNonce.Store(&n)
			return nil
		}
		if cur != nil {
			// The server refused a token: a request got through with
			// it before (or it is brand new and refused at once).
			if cur.refresh != "" {
				if err := a.refreshFor(ctx, cur, bc); err == nil {
					return nil
				} else {
					a.log.Debug("oauth: refresh after 401 failed", "err", err)
				}
			}
		}
		return a.authorize(ctx, bc, false)
	case http.StatusForbidden:
		if bc.error != "insufficient_scope" {
			return fmt.Errorf("oauth: forbidden (%s)", describe(bc))
		}
		if cur == nil {
			return a.authorize(ctx, bc, false)
		}
		asked := strings.Fields(bc.scope)
		if len(asked) > 0 && subset(asked, cur.scopes) {
			return fmt.Errorf("oauth: insufficient_scope for scopes %q already granted: re-authorizing cannot help", bc.scope)
		}
		want := union(cur.scopes, asked)
		key := strings.Join(slices.Sorted(slices.Values(want)), " ")
		if a.cfg.MaxStepUps < 0 || a.stepUps[key] >= a.cfg.MaxStepUps {
			return fmt.Errorf("oauth: insufficient_scope (%s) after %d step-up authorizations for %q: giving up", describe(bc), a.stepUps[key], key)
		}
		a.stepUps[key]++
		return a.authorize(ctx, bc, true)
	}
	return fmt.Errorf("oauth: HTTP %d is not an authorization challenge", status)
}

// Proof makes the DPoP proof of a request to the MCP server
// (streamhttp.ProofAuthorizer): method, URL without query, the server's
// last nonce, the hash of the access token in authorization.
func (a *Authorizer) Proof(method, u, authorization string) (string, error) {
	if a.dpopKey == nil {
		return "", errors.New("oauth: DPoP is off")
	}
	nonce := ""
	if n := a.rsNonce.Load(); n != nil {
		nonce = *n
	}
	_, tok, _ := strings.Cut(authorization, " ")
	return dpopProof(a.dpopKey, method, u, nonce, tok)
}

// Token returns the current access token ("" for none) and its expiry.
func (a *Authorizer) Token() (string, time.Time) {
	t := a.cur.Load()
	if t == nil {
		return "", time.Time{}
	}
	_, tok, _ := strings.Cut(t.header, " ")
	return tok, t.expiry
}

func describe(bc bearerChallenge) string {
	var parts []string
	if bc.error != "" {
		parts = append(parts, "error="+bc.error)
	}
	if bc.scope != "" {
		parts = append(parts, "scope="+bc.scope)
	}
	if bc.errorDescription != "" {
		parts = append(parts, bc.errorDescription)
	}
	if len(parts) == 0 {
		return "no Bearer challenge"
	}
	return strings.Join(parts, ", ")
}

func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// union returns a followed by the elements of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
