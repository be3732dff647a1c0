package streamhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultPath = "/mcp"
	// DefaultMaxBodyBytes is one message, the bound every transport puts
	// on it by default (framing.DefaultMaxLine, 4 MiB).
	DefaultMaxBodyBytes     = framing.DefaultMaxLine
	DefaultMaxHeaderBytes   = 16 << 10
	DefaultReadTimeout      = 10 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
	DefaultReadIdleTimeout  = 10 * time.Second
	DefaultWriteIdleTimeout = 30 * time.Second
	DefaultKeepAlive        = 15 * time.Second
	DefaultMaxPendingBytes  = 8 << 20
	DefaultMaxListenPending = 1 << 20
	DefaultMaxConnsPerIP    = 1024
	DefaultMaxConns         = 16384
	DefaultCompressMinBytes = 1024
	DefaultAuthTimeout      = 10 * time.Second
)

// Authenticator verifies the bearer token of a request (SEC-04). It returns
// the principal, which reaches handlers as Call.Principal, or an error:
// ErrInsufficientScope answers 403, one wrapping ErrAuthUnavailable 503,
// any other error 401. token is empty when the request carries no
// Authorization: Bearer header.
type Authenticator func(ctx context.Context, token string) (principal any, err error)

// ErrInsufficientScope is returned by an Authenticator to answer 403 with
// error="insufficient_scope".
type ErrInsufficientScope struct{ Scope string }

func (e *ErrInsufficientScope) Error() string { return "streamhttp: insufficient scope " + e.Scope }

// Authorizer decides, once the request's body has been read and checked
// against its mirrored headers, whether principal (what the Authenticator
// returned) may make it: method is the JSON-RPC method and name the tool
// or prompt name or the resource URI ("" for other methods). It returns
// nil, or an error: ErrInsufficientScope answers 403 with
// error="insufficient_scope" and its scope, any other error a plain 403.
// Either way the body carries a JSON-RPC error for the request's id.
type Authorizer func(ctx context.Context, principal any, method, name string) error

// ErrUnauthorized is a ready-made 401 for Authenticators.
var ErrUnauthorized = errors.New("streamhttp: missing or invalid bearer token")

// ErrAuthUnavailable, wrapped by an Authenticator's error, answers 503
// with Retry-After (Stats.AuthUnavailable), not 401: the token was not
// checked because something the check needs is busy or down (package
// auth: too many introspections at once), so the client should retry
// rather than discard its token.
var ErrAuthUnavailable = errors.New("streamhttp: authentication unavailable")

// Config configures the Streamable HTTP binding. Every field's zero value
// selects the documented default; its limits follow the package's rule
// (see Limits in the package documentation): 0 is the default, negative is
// no limit unless the field says otherwise.
type Config struct {
	// Path is the one MCP endpoint (HTTP-01). Default "/mcp"; other paths
	// get 404.
	Path string

	// AllowedOrigins is the exact-match allow-list for the Origin header
	// (SEC-01/02), compared after normalisation (lowercase scheme and host,
	// default port dropped, no trailing slash). Nil: the server's own
	// loopback origins (http://127.0.0.1:PORT, http://localhost:PORT,
	// http://[::1]:PORT). An empty non-nil list allows no Origin at all
	// (fail closed). A request without Origin (non-browser client) is allowed.
	AllowedOrigins []string
	// AllowedHosts is the allow-list for the Host header on loopback
	// listeners (DNS-rebinding defence, SEC-03), host names without port.
	// Nil: localhost, 127.0.0.1, ::1. Ignored on non-loopback listeners.
	AllowedHosts []string
	// AllowNonLoopback must be set to listen on an address other than
	// loopback (SEC-04).
	AllowNonLoopback bool
	// InsecurePlaintext must also be set for the fasthttp front end
	// (Listen, Serve) to serve plain HTTP, without TLS, on a non-loopback
	// address: behind a balancer that terminates TLS, or on a private
	// network. Serve then logs a warning. Remote MCP servers are reached
	// over HTTPS (the authorization spec requires it). The net/http
	// adapter's Handler does not check it: its TLS may be the embedding
	// http.Server's.
	InsecurePlaintext bool

	// TLS, when set, makes the server speak HTTPS: the fasthttp front end
	// (Serve) and the net/http adapter's listener (NetListener; serve it
	// with http.Server.Serve, not ServeTLS, and requests then arrive with
	// a nil Request.TLS) both run the handshake above the connection
	// limits. It is cloned by New; ALPN offers http/1.1 and never h2
	// (HTTP/2 is not served; other NextProtos, such as acme-tls/1, are
	// kept), and MinVersion 0 means TLS 1.2.
	// It needs Certificates, GetCertificate or GetConfigForClient; to
	// renew the certificate without a restart set GetCertificate, for
	// instance to CertFiles.GetCertificate, which reloads PEM files when
	// they change. Nil: plain HTTP.
	TLS *tls.Config

	// Authenticate, when set, is called for every POST with its bearer
	// token (and for every request of a mount but PublicMounts). On a TLS
	// front end with client certificates its context carries the verified
	// peer chains (VerifiedChains). Its context also carries the request's
	// values and ends after AuthTimeout or when the client closes its
	// connection, whichever comes first (F4); an authenticator must return
	// once it ends. An error returned after AuthTimeout is answered 503
	// with Retry-After (Stats.AuthTimeouts), not 401: the token may be good
	// and its check slow (an issuer's keys or an introspection endpoint not
	// answering); after the client left, the request is dropped
	// (Stats.Disconnects).
	Authenticate Authenticator
	// AuthTimeout bounds one Authenticate call. Default DefaultAuthTimeout
	// (10 s, as sockets have); negative means none (unsafe: a hung token
	// check then holds the connection until the client leaves).
	AuthTimeout time.Duration
	// Authorize, when set with Authenticate, is called for each request
	// that passed validation, before the engine runs it: per-tool scopes
	// (package auth), for instance.
	Authorize Authorizer
	// ResourceMetadata is the Protected Resource Metadata URL advertised in
	// WWW-Authenticate on 401/403 (SEC-04).
	ResourceMetadata string
	// ChallengeScope, when set, is the scope parameter of 401 challenges
	// (RFC 6750 §3): the space-separated scopes a client should ask for.
	ChallengeScope string

	// MaxBodyBytes bounds a request body in bytes, also when chunked and
	// after Content-Encoding is undone: 413 past it (Stats.BodyTooLarge).
	// Default DefaultMaxBodyBytes (4 MiB); negative means unlimited
	// (unsafe: a body is held in memory whole, and a compressed one can
	// expand without bound).
	MaxBodyBytes int
	// MaxHeaderBytes bounds the request headers in bytes: 431 past it
	// (Stats.HeadersTooLarge). Default DefaultMaxHeaderBytes (16 KiB). It
	// is also the size of each connection's read buffer, so it cannot be
	// unlimited: a negative value is taken as 0, the default.
	MaxHeaderBytes int
	// ReadTimeout bounds reading one request (headers and body): 408 past
	// it (Stats.ReadTimeouts). Default DefaultReadTimeout (10 s); negative
	// means none (unsafe: a client may hold a connection by never
	// finishing a request). The same holds for ReadIdleTimeout,
	// IdleTimeout and WriteIdleTimeout below.
	ReadTimeout time.Duration
	// ReadIdleTimeout bounds the wait between two reads of one request
	// (C2: a body trickled after its headers): past it the request is
	// answered 408 and the connection closed (Stats.ReadIdleTimeouts). It
	// holds while ReadTimeout is longer (large bodies over slow links) and
	// is never applied between keep-alive requests (IdleTimeout is). Both
	// front ends; the net/http adapter applies it behind NetListener (the
	// rest of its read timeouts are the embedding http.Server's), to a
	// header block and a Content-Length body (a chunked request is read
	// under the http.Server's ReadTimeout alone). Default
	// DefaultReadIdleTimeout (10 s); negative means none (unsafe).
	ReadIdleTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection. Default DefaultIdleTimeout (60 s); negative means none
	// (unsafe: idle connections are kept until MaxConns is reached).
	IdleTimeout time.Duration
	// WriteIdleTimeout closes a response stream when one write makes no
	// progress for this long (never an absolute deadline, C3;
	// Stats.StreamWriteErrors). Default DefaultWriteIdleTimeout (30 s);
	// negative means none (unsafe: a client that stops reading holds its
	// stream until MaxPendingBytes is queued).
	WriteIdleTimeout time.Duration
	// KeepAlive is the interval of SSE keep-alive comments on a silent
	// stream (SSE-05). Default DefaultKeepAlive (15 s). It is an interval,
	// not a limit: a negative value is taken as 0, the default.
	KeepAlive time.Duration
	// MaxPendingBytes bounds the bytes queued for one stream whose client
	// stopped reading; past it the stream is closed and the request
	// cancelled (slow consumer, C5; Stats.SlowConsumers). Default
	// DefaultMaxPendingBytes (8 MiB); negative means unlimited (unsafe).
	MaxPendingBytes int
	// MaxListenPendingBytes is MaxPendingBytes for subscriptions/listen
	// streams, kept smaller because there may be thousands of them; updates
	// of one URI still queued collapse into one. Default
	// DefaultMaxListenPending (1 MiB); negative means unlimited (unsafe).
	MaxListenPendingBytes int
	// MaxConnsPerIP (429 past it, Stats.TooManyConnsPerIP) and MaxConns
	// (503 past it, Stats.TooManyConns) bound connections (C11). Defaults
	// DefaultMaxConnsPerIP (1024) and DefaultMaxConns (16384); negative
	// means unlimited (unsafe: each connection costs a file descriptor
	// and a read buffer of MaxHeaderBytes).
	MaxConnsPerIP, MaxConns int

	// TrustedProxies lists the balancers (CIDRs) in front of this server.
	// A connection from one of them must begin with a PROXY protocol
	// header, version 1 or 2 (HAProxy "send-proxy" or "send-proxy-v2"),
	// naming the client: MaxConnsPerIP then counts that client, not the
	// balancer (E7), and the connection's remote address is the client's.
	// A trusted connection without a valid header is closed
	// (Stats.BadProxyHeader); a LOCAL header (health check) counts
	// against no client. Nil: no proxy is trusted, and a server behind a
	// balancer sees one client.
	TrustedProxies []netip.Prefix

	// Compression enables gzip and zstd for JSON replies of at least
	// CompressMinBytes bytes (default DefaultCompressMinBytes, 1 KiB) when
	// Accept-Encoding allows. SSE responses are never compressed (see the
	// package documentation). CompressMinBytes is a threshold, not a
	// limit: a negative value is taken as 0, the default.
	Compression      bool
	CompressMinBytes int

	// Mounts serves other paths of the same listener with net/http
	// handlers (for example a 2025-11-25 endpoint for old clients, see
	// package transport/legacy), keyed by exact path; Path itself cannot be
	// mounted over. A mounted handler gets the listener's connection
	// limits, its Origin and Host checks (403), Authenticate (401/403; the
	// principal through PrincipalFrom) and 503 once Shutdown has begun,
	// and nothing else of this package: no MCP validation. On the fasthttp
	// front end its response is buffered
	// until it first flushes, then streamed; http.ResponseController's
	// SetWriteDeadline reaches the connection. A handler that can serve
	// fasthttp requests itself (transport/legacy's Handler) is given them
	// first, after the same checks, without a net/http request.
	Mounts map[string]http.Handler
	// PublicMounts are Mounts that Authenticate does not guard: documents
	// a client reads before it has a token, such as the Protected Resource
	// Metadata of RFC 9728 (package auth). They get every other check of
	// Mounts. A path in both maps is public.
	PublicMounts map[string]http.Handler

	// Logger receives transport logs; nil discards them.
	Logger *slog.Logger
}

// What a negative (unlimited) limit becomes. noLimit is far past any real
// size or count yet leaves room for the +1 and +1 MiB added to limits
// (decodeBody, fasthttp's Concurrency); noTimeout is a deadline about 146
// years away, which time arithmetic and the runtime's poller still handle
// exactly.
const (
	noLimit   = math.MaxInt >> 1
	noTimeout = time.Duration(math.MaxInt64 >> 1)
)

// limit applies the rule to a size or count: 0 is def, negative noLimit.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return noLimit
	}
	return v
}

// timeout applies the rule to a timeout: 0 is def, negative noTimeout.
func timeout(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return noTimeout
	}
	return v
}

func (c Config) withDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	c.MaxBodyBytes = limit(c.MaxBodyBytes, DefaultMaxBodyBytes)
	if c.MaxHeaderBytes <= 0 { // a buffer size: never unlimited
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	c.ReadTimeout = timeout(c.ReadTimeout, DefaultReadTimeout)
	c.IdleTimeout = timeout(c.IdleTimeout, DefaultIdleTimeout)
	c.ReadIdleTimeout = timeout(c.ReadIdleTimeout, DefaultReadIdleTimeout)
	c.WriteIdleTimeout = timeout(c.WriteIdleTimeout, DefaultWriteIdleTimeout)
	c.AuthTimeout = timeout(c.AuthTimeout, DefaultAuthTimeout)
	if c.KeepAlive <= 0 { // an interval, not a limit
		c.KeepAlive = DefaultKeepAlive
	}
	c.MaxPendingBytes = limit(c.MaxPendingBytes, DefaultMaxPendingBytes)
	c.MaxListenPendingBytes = limit(c.MaxListenPendingBytes, DefaultMaxListenPending)
	c.MaxConnsPerIP = limit(c.MaxConnsPerIP, DefaultMaxConnsPerIP)
	c.MaxConns = limit(c.MaxConns, DefaultMaxConns)
	if c.CompressMinBytes <= 0 { // a threshold, not a limit
		c.CompressMinBytes = DefaultCompressMinBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
