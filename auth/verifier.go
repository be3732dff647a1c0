package auth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// ErrInvalidToken is wrapped by every refusal of a token (401).
var ErrInvalidToken = errors.New("auth: invalid token")

// Stats counts the verifier's verdicts.
type Stats struct {
	Verified          atomic.Uint64 // tokens accepted (JWT or introspected)
	Rejected          atomic.Uint64 // tokens refused: 401
	InsufficientScope atomic.Uint64 // 403 insufficient_scope
	Introspections    atomic.Uint64 // introspection requests made
	KeyFetches        atomic.Uint64 // key set fetches that succeeded
	RefetchLimited    atomic.Uint64 // unknown-kid refetches refused by JWKSMinRefetch

	IntrospectionsLimited  atomic.Uint64 // opaque tokens answered 503: MaxIntrospections in flight
	IntrospectionCacheHits atomic.Uint64 // opaque tokens refused by a remembered inactive answer
}

func (s *Stats) fetched()        { s.KeyFetches.Add(1) }
func (s *Stats) refetchLimited() { s.RefetchLimited.Add(1) }

// Verifier checks bearer tokens for one resource. Safe for concurrent use.
type Verifier struct {
	cfg      Config
	algs     []jose.SignatureAlgorithm
	auds     []string
	scopeStr string // Config.Scopes, space-separated
	keys     *keySet
	intro    chan struct{} // MaxIntrospections slots; nil: unlimited
	negative *negCache     // inactive introspection answers; nil: none
	hc       *http.Client
	log      *slog.Logger
	now      func() time.Time

	metaURL   string
	metaPaths []string
	metaBody  []byte

	stats Stats
}

// New checks cfg and returns a Verifier. Nothing is fetched yet: the key
// set is fetched on the first token.
func New(cfg Config) (*Verifier, error) {
	u, err := url.Parse(cfg.Resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" {
		return nil, fmt.Errorf("auth: Config.Resource %q is not an absolute http(s) URL without fragment", cfg.Resource)
	}
	if cfg.Issuer == "" && cfg.Introspection == nil {
		return nil, errors.New("auth: Config.Issuer (JWTs) or Config.Introspection (opaque tokens) is required")
	}
	if cfg.Issuer != "" {
		if err := checkURL("Config.Issuer", cfg.Issuer); err != nil {
			return nil, err
		}
	}
	if cfg.JWKSURL != "" {
		if cfg.Issuer == "" {
			return nil, errors.New("auth: Config.JWKSURL needs Config.Issuer")
		}
		if err := checkURL("Config.JWKSURL", cfg.JWKSURL); err != nil {
			return nil, err
		}
	}
	if in := cfg.Introspection; in != nil {
		if err := checkURL("Config.Introspection.URL", in.URL); err != nil {
			return nil, err
		}
		if in.ClientID == "" {
			return nil, errors.New("auth: Config.Introspection needs a ClientID")
		}
	}
	if cfg.Algorithms == nil {
		cfg.Algorithms = DefaultAlgorithms
	}
	if len(cfg.Algorithms) == 0 {
		return nil, errors.New("auth: Config.Algorithms is empty")
	}
	var algs []jose.SignatureAlgorithm
	for _, a := range cfg.Algorithms {
		if !slices.Contains(DefaultAlgorithms, a) {
			return nil, fmt.Errorf("auth: algorithm %q is not allowed (asymmetric JWS algorithms only)", a)
		}
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	for _, s := range slices.Concat(cfg.Scopes, slices.Concat(slices.Collect(maps.Values(cfg.ToolScopes))...)) {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			return nil, fmt.Errorf("auth: scope %q: a scope is a non-empty token without spaces or quotes", s)
		}
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = DefaultLeeway
	} else if cfg.Leeway < 0 {
		cfg.Leeway = 0
	}
	if cfg.JWKSMinRefetch == 0 {
		cfg.JWKSMinRefetch = DefaultJWKSMinRefetch
	} else if cfg.JWKSMinRefetch < 0 {
		cfg.JWKSMinRefetch = 0
	}
	if cfg.JWKSMaxAge == 0 {
		cfg.JWKSMaxAge = DefaultJWKSMaxAge
	}
	if cfg.MaxTokenBytes == 0 {
		cfg.MaxTokenBytes = DefaultMaxTokenBytes
	} else if cfg.MaxTokenBytes < 0 {
		cfg.MaxTokenBytes = int(^uint(0) >> 2)
	}
	if cfg.MaxMetadataBytes == 0 {
		cfg.MaxMetadataBytes = DefaultMaxMetadataBytes
	} else if cfg.MaxMetadataBytes < 0 {
		cfg.MaxMetadataBytes = int(^uint(0) >> 2)
	}
	if cfg.MaxIntrospections == 0 {
		cfg.MaxIntrospections = DefaultMaxIntrospections
	}
	if cfg.IntrospectionNegativeTTL == 0 {
		cfg.IntrospectionNegativeTTL = DefaultIntrospectionNegativeTTL
	}
	v := &Verifier{cfg: cfg, algs: algs, auds: cfg.Audiences, hc: cfg.HTTPClient, log: cfg.Logger, now: cfg.Now,
		scopeStr: strings.Join(cfg.Scopes, " ")}
	if v.auds == nil {
		v.auds = []string{cfg.Resource}
	}
	if v.hc == nil {
		v.hc = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	if v.now == nil {
		v.now = time.Now
	}
	if cfg.Issuer != "" {
		v.keys = newKeySet(v)
	}
	if cfg.Introspection != nil {
		if cfg.MaxIntrospections > 0 {
			v.intro = make(chan struct{}, cfg.MaxIntrospections)
		}
		if cfg.IntrospectionNegativeTTL > 0 {
			v.negative = newNegCache(cfg.IntrospectionNegativeTTL, DefaultIntrospectionNegativeEntries)
		}
	}

	// Protected Resource Metadata (RFC 9728 §2).
	v.metaPaths = metadataPaths(u)
	v.metaURL = u.Scheme + "://" + u.Host + v.metaPaths[0]
	md := resourceMetadata{Resource: cfg.Resource, AuthorizationServers: cfg.AuthorizationServers,
		ScopesSupported: cfg.ScopesSupported, BearerMethodsSupported: []string{"header"},
		ResourceName: cfg.ResourceName}
	if md.AuthorizationServers == nil && cfg.Issuer != "" {
		md.AuthorizationServers = []string{cfg.Issuer}
	}
	if md.ScopesSupported == nil {
		md.ScopesSupported = allScopes(cfg)
	}
	v.metaBody, _ = json.Marshal(md)
	return v, nil
}

// allScopes is Scopes and every ToolScopes scope, sorted, once each.
func allScopes(cfg Config) []string {
	all := slices.Clone(cfg.Scopes)
	for _, s := range cfg.ToolScopes {
		all = append(all, s...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// Stats returns the verifier's counters.
func (v *Verifier) Stats() *Stats { return &v.stats }

// MetadataURL is the URL of the Protected Resource Metadata (the
// path-suffixed one for a non-root resource), as advertised in
// WWW-Authenticate.
func (v *Verifier) MetadataURL() string { return v.metaURL }

// MetadataPaths are the paths the metadata is served at on the resource's
// host: the path-suffixed one first, then the root one.
func (v *Verifier) MetadataPaths() []string { return slices.Clone(v.metaPaths) }

// MetadataHandler serves the Protected Resource Metadata (GET and HEAD).
func (v *Verifier) MetadataHandler() http.Handler { return metadataHandler(v.metaBody) }

// Install wires v into c: Authenticate, Authorize, ResourceMetadata and
// ChallengeScope (Config.Scopes; each when empty) and the metadata's paths
// in PublicMounts (a copy of the map).
//
// Config.ToolScopes are then enforced by Authorize, which streamhttp
// calls for its own endpoint only. A transport/legacy handler in
// c.Mounts (or any other transport of the same engine) is guarded by
// Authenticate (a valid token and Config.Scopes) but not by per-tool
// scopes: add v.Middleware() to engine.Config.Middleware as well, or a
// token without a tool's scopes calls that tool through the legacy
// endpoint. (mcpwire serve does add it.)
func (v *Verifier) Install(c *streamhttp.Config) {
	c.Authenticate = v.Authenticate
	c.Authorize = v.Authorize
	if c.ResourceMetadata == "" {
		c.ResourceMetadata = v.metaURL
	}
	if c.ChallengeScope == "" {
		c.ChallengeScope = v.scopeStr
	}
	m := maps.Clone(c.PublicMounts)
	if m == nil {
		m = map[string]http.Handler{}
	}
	h := v.MetadataHandler()
	for _, p := range v.metaPaths {
		m[p] = h
	}
	c.PublicMounts = m
}

// Authenticate is a streamhttp.Authenticator: it verifies token (Verify)
// and requires Config.Scopes. The principal is a *Principal.
func (v *Verifier) Authenticate(ctx context.Context, token string) (any, error) {
	if token == "" {
		return nil, streamhttp.ErrUnauthorized
	}
	p, err := v.Verify(ctx, token)
	if errors.Is(err, streamhttp.ErrAuthUnavailable) {
		return nil, err // 503: not checked, so not refused
	}
	if err != nil {
		v.stats.Rejected.Add(1)
		v.log.Debug("auth: token refused", "err", err)
		return nil, err
	}
	if p.missing(v.cfg.Scopes) {
		v.stats.InsufficientScope.Add(1)
		return nil, &streamhttp.ErrInsufficientScope{Scope: v.scopeStr}
	}
	v.stats.Verified.Add(1)
	return p, nil
}

// Authorize is a streamhttp.Authorizer: a tools/call of a tool with
// Config.ToolScopes needs them (and Config.Scopes); the challenge names
// all the scopes the call needs.
func (v *Verifier) Authorize(_ context.Context, principal any, method, name string) error {
	if method != "tools/call" {
		return nil
	}
	need := v.cfg.ToolScopes[name]
	if len(need) == 0 {
		return nil
	}
	p, _ := principal.(*Principal)
	if p != nil && !p.missing(need) {
		return nil
	}
	v.stats.InsufficientScope.Add(1)
	return &streamhttp.ErrInsufficientScope{Scope: v.challengeScope(need)}
}

// Verify checks token: a JWT against the issuer's keys, another token
// with the introspection endpoint when configured. Errors wrap
// ErrInvalidToken (or are the context's), or, for a token that could not
// be checked now (MaxIntrospections in flight), streamhttp.ErrAuthUnavailable.
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if len(token) > v.cfg.MaxTokenBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidToken, v.cfg.MaxTokenBytes)
	}
	chains := streamhttp.VerifiedChains(ctx)
	var p *Principal
	var cnf string
	var err error
	_, herr := parseHeader(token, v.cfg.Algorithms)
	switch {
	case herr == nil && v.keys != nil:
		p, cnf, err = v.verifyJWT(ctx, token)
	case v.cfg.Introspection != nil && (v.keys == nil || errors.Is(herr, errNotJWT)):
		// Opaque tokens; every token when no issuer's keys are configured.
		p, cnf, err = v.introspect(ctx, token)
	case herr != nil && !errors.Is(herr, errNotJWT):
		err = fmt.Errorf("%w: %v", ErrInvalidToken, herr)
	default:
		err = fmt.Errorf("%w: a token of a kind this server does not accept", ErrInvalidToken)
	}
	if err != nil {
		return nil, err
	}
	if len(chains) > 0 {
		p.Certificate = chains[0][0]
	}
	if cnf != "" { // RFC 8705 §3: a certificate-bound token
		if p.Certificate == nil || thumbprint(p.Certificate) != cnf {
			return nil, fmt.Errorf("%w: the token is bound to a client certificate this connection did not present", ErrInvalidToken)
		}
	}
	return p, nil
}

func thumbprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// claims are the members of an access token the verifier reads
// (RFC 9068 §2.2, RFC 8693 §4.2 for scope, RFC 8705 §3.1 for cnf).
type claims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	ID        string           `json:"jti"`
	Scope     string           `json:"scope"`
	Scp       json.RawMessage  `json:"scp"`
	ClientID  string           `json:"client_id"`
	AZP       string           `json:"azp"`
	Cnf       *struct {
		X5T string `json:"x5t#S256"`
	} `json:"cnf"`
}

func (v *Verifier) verifyJWT(ctx context.Context, token string) (*Principal, string, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil || len(tok.Headers) != 1 {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	h := tok.Headers[0]
	key, err := v.keys.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, "", err
	}
	var c claims
	if err := tok.Claims(key, &c); err != nil {
		return nil, "", fmt.Errorf("%w: signature: %v", ErrInvalidToken, err)
	}
	if c.Expiry == nil {
		return nil, "", fmt.Errorf("%w: no exp", ErrInvalidToken)
	}
	var nbf time.Time
	if c.NotBefore != nil {
		nbf = c.NotBefore.Time()
	}
	if err := v.checkClaims(c.Issuer, c.Audience, c.Expiry.Time(), nbf); err != nil {
		return nil, "", err
	}
	p := &Principal{Subject: c.Subject, ClientID: c.ClientID, Issuer: c.Issuer, Audience: c.Audience,
		Expiry: c.Expiry.Time(), TokenID: c.ID, Scopes: scopeList(c.Scope, c.Scp)}
	if p.ClientID == "" {
		p.ClientID = c.AZP
	}
	if p.String() == "" {
		return nil, "", errNoIdentity
	}
	cnf := ""
	if c.Cnf != nil {
		cnf = c.Cnf.X5T
	}
	return p, cnf, nil
}

// checkClaims applies the issuer, audience (RFC 8707) and time rules;
// a zero exp or nbf is not checked.
func (v *Verifier) checkClaims(iss string, aud []string, exp, nbf time.Time) error {
	if iss != v.cfg.Issuer {
		return fmt.Errorf("%w: issued by %q", ErrInvalidToken, iss)
	}
	ok := false
	for _, a := range aud {
		if slices.Contains(v.auds, a) {
			ok = true
			break
		}
	}
	if !ok {
		return fmt.Errorf("%w: not issued for this resource (aud %q)", ErrInvalidToken, aud)
	}
	now := v.now()
	if !exp.IsZero() && !now.Before(exp.Add(v.cfg.Leeway)) {
		return fmt.Errorf("%w: expired", ErrInvalidToken)
	}
	if !nbf.IsZero() && now.Add(v.cfg.Leeway).Before(nbf) {
		return fmt.Errorf("%w: not valid yet", ErrInvalidToken)
	}
	return nil
}

// scopeList reads scope (space-separated) or, without it, scp (an array
// or a space-separated string).
func scopeList(scope string, scp json.RawMessage) []string {
	if scope != "" {
		return strings.Fields(scope)
	}
	if len(scp) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(scp, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(scp, &s) == nil {
		return strings.Fields(s)
	}
	return nil
}
