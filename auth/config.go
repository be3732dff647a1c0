package auth

import (
	"log/slog"
	"net/http"
	"time"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	// DefaultLeeway is the clock skew allowed on exp and nbf.
	DefaultLeeway = 60 * time.Second
	// DefaultJWKSMinRefetch is the shortest interval between two fetches
	// of the key set caused by an unknown kid.
	DefaultJWKSMinRefetch = 30 * time.Second
	// DefaultJWKSMaxAge is how long a fetched key set is used before it
	// is fetched again.
	DefaultJWKSMaxAge = time.Hour
	// DefaultMaxTokenBytes bounds a bearer token.
	DefaultMaxTokenBytes = 16 << 10
	// DefaultMaxMetadataBytes bounds a metadata, key set or introspection
	// document read from the authorization server.
	DefaultMaxMetadataBytes = 1 << 20
	// DefaultHTTPTimeout bounds each request to the authorization server
	// when Config.HTTPClient is nil.
	DefaultHTTPTimeout = 10 * time.Second
	// DefaultMaxIntrospections bounds the introspection requests in flight
	// at once.
	DefaultMaxIntrospections = 64
	// DefaultIntrospectionNegativeTTL is how long an inactive
	// introspection answer is remembered.
	DefaultIntrospectionNegativeTTL = 30 * time.Second
	// DefaultIntrospectionNegativeEntries bounds the inactive answers
	// remembered.
	DefaultIntrospectionNegativeEntries = 10000
)

// DefaultAlgorithms is the signature algorithm allow-list when
// Config.Algorithms is nil: asymmetric algorithms only.
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Config configures a Verifier.
type Config struct {
	// Resource is the canonical URI of the MCP endpoint
	// ("https://mcp.example.com/mcp"): the resource of the Protected
	// Resource Metadata, and the audience tokens must name unless
	// Audiences is set. Required.
	Resource string
	// Issuer is the authorization server whose tokens are accepted: a
	// JWT's iss must equal it, and its metadata names the key set unless
	// JWKSURL is set. Required for JWTs; without it only introspection
	// is used. http:// is accepted for loopback hosts only, here and in
	// JWKSURL and Introspection.URL.
	Issuer string
	// AuthorizationServers are the authorization_servers of the Protected
	// Resource Metadata. Nil: Issuer.
	AuthorizationServers []string
	// Audiences are the aud values accepted (any one of them). Nil:
	// Resource.
	Audiences []string
	// JWKSURL is the issuer's JSON Web Key Set. "": the jwks_uri of the
	// issuer's metadata (RFC 8414, then OpenID Connect discovery).
	JWKSURL string
	// Algorithms is the JWS algorithm allow-list. Nil: DefaultAlgorithms.
	// "none" and the HS* (shared secret) algorithms are refused: keys
	// come from a public key set.
	Algorithms []string
	// Leeway is the clock skew allowed on exp and nbf. Default
	// DefaultLeeway (60 s); negative means none.
	Leeway time.Duration
	// Scopes are required of every request (403 insufficient_scope
	// without them).
	Scopes []string
	// ToolScopes are required, on top of Scopes, by tools/call of the
	// named tool.
	ToolScopes map[string][]string
	// ScopesSupported are the scopes_supported of the Protected Resource
	// Metadata. Nil: Scopes and every ToolScopes scope.
	ScopesSupported []string
	// ResourceName is the human-readable resource_name of the metadata.
	ResourceName string
	// Introspection, when set, checks tokens that are not JWTs with the
	// authorization server's introspection endpoint (RFC 7662).
	Introspection *Introspection
	// MaxIntrospections bounds the introspection requests in flight at
	// once: a request with an opaque token past it is answered 503 with
	// Retry-After (streamhttp.ErrAuthUnavailable;
	// Stats.IntrospectionsLimited), not sent. Default
	// DefaultMaxIntrospections (64); negative means unlimited (unsafe:
	// every request with a made-up token costs one outbound request).
	MaxIntrospections int
	// IntrospectionNegativeTTL is how long an inactive answer
	// ("active": false) is remembered, keyed by the token's SHA-256: the
	// same token is refused again without a request
	// (Stats.IntrospectionCacheHits). At most
	// DefaultIntrospectionNegativeEntries answers are kept. Default
	// DefaultIntrospectionNegativeTTL (30 s); negative means none. Active
	// answers are not cached: a revoked token is refused at once.
	IntrospectionNegativeTTL time.Duration
	// JWKSMinRefetch is the shortest interval between two key set fetches
	// caused by an unknown kid (a forged kid cannot make the server hammer
	// the issuer). Default DefaultJWKSMinRefetch (30 s); negative means
	// no interval (unsafe).
	JWKSMinRefetch time.Duration
	// JWKSMaxAge is how long a key set is used before it is fetched again.
	// Default DefaultJWKSMaxAge (1 h); negative means until an unknown kid.
	JWKSMaxAge time.Duration
	// MaxTokenBytes bounds a bearer token: 401 past it. Default
	// DefaultMaxTokenBytes (16 KiB); negative means unlimited (unsafe).
	MaxTokenBytes int
	// MaxMetadataBytes bounds each document read from the authorization
	// server. Default DefaultMaxMetadataBytes (1 MiB); negative means
	// unlimited (unsafe).
	MaxMetadataBytes int
	// HTTPClient makes the requests to the authorization server. Nil: a
	// client with a DefaultHTTPTimeout timeout.
	HTTPClient *http.Client
	// Now is the clock (tests). Nil: time.Now.
	Now func() time.Time
	// Logger receives the verifier's logs (never a token). Nil discards them.
	Logger *slog.Logger
}

// Introspection is an RFC 7662 token introspection endpoint and the
// credentials this resource server authenticates to it with
// (client_secret_basic).
type Introspection struct {
	URL          string
	ClientID     string
	ClientSecret string
}
