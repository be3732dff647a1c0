package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// serveFlags are serve's command line, as given: serveFlags.config checks
// them and turns them into the transports' configurations.
type serveFlags struct {
	// transports
	stdio, stdioLegacy                bool
	httpAddr, tcpAddr, unixPath, path string
	legacyPath                        string

	// security
	origins, hosts         string
	nonLoopback, plainHTTP bool
	tlsCert, tlsKey        string
	trusted                prefixList
	testAuth               bool
	oauth                  oauthFlags // --oauth-*: serve_oauth.go

	// limits; 0 is each library's default, negative no limit where the
	// library allows it (the help says which)
	maxBody, maxHeader, maxLine            int
	perIP, maxConns, sockConns, eventLoops int
	keepAlive, grace, progress             time.Duration
	compress                               bool

	// per-caller limits (RELIABILITY F5)
	listensPerPrincipal, inFlightPerPrincipal int
	ratePerPrincipal                          float64
	rateBurst                                 int
	sessionsPerPrincipal, sessionsPerIP       int

	// operations
	logLevel, state, stateKeyFile string
	cpuProfile, memProfile, trace string
	admin                         string
	adminNonLoopback              bool

	safe       safeFlags       // serve_safe.go
	stateRedis stateRedisFlags // state_managed.go
}

// parseServeFlags parses serve's arguments; a bad one exits with status 2
// after printing the usage, as flag.ExitOnError does.
func parseServeFlags(args []string) *serveFlags {
	f := new(serveFlags)
	_ = newServeFlagSet(f).Parse(args)
	return f
}

// newServeFlagSet defines serve's flags into f.
func newServeFlagSet(f *serveFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	f.transportFlags(fs)
	f.securityFlags(fs)
	f.oauth.define(fs)
	f.limitFlags(fs)
	f.perCallerFlags(fs)
	f.opsFlags(fs)
	f.safetyFlags(fs)
	f.stateRedisFlagSet(fs)
	hideTestFlags(fs) // help.go
	return fs
}

func (f *serveFlags) transportFlags(fs *flag.FlagSet) {
	fs.BoolVar(&f.stdio, "stdio", false, "serve MCP on stdin/stdout")
	fs.StringVar(&f.httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8080)")
	fs.StringVar(&f.tcpAddr, "tcp", "", "serve line-framed JSON-RPC on this TCP address (e.g. 127.0.0.1:9000)")
	fs.StringVar(&f.unixPath, "unix", "", "serve line-framed JSON-RPC on this Unix socket path")
	fs.StringVar(&f.path, "path", streamhttp.DefaultPath, "the HTTP endpoint path")
	fs.StringVar(&f.legacyPath, "legacy-path", "", "also serve MCP 2025-11-25 (sessions, GET stream) to old clients on this path of the --http listener, e.g. /mcp-2025")
	fs.BoolVar(&f.stdioLegacy, "stdio-legacy", false, "with --stdio: a connection whose first message is initialize speaks MCP 2025-11-25 (without it, initialize gets the -32022 of a 2026-07-28-only server)")
}

func (f *serveFlags) securityFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.origins, "allow-origins", "", "comma-separated Origin allow-list (default: the server's own loopback origins; \"none\" allows none)")
	fs.StringVar(&f.hosts, "allow-hosts", "", "comma-separated Host allow-list for loopback listeners (default: localhost, 127.0.0.1, ::1)")
	fs.BoolVar(&f.nonLoopback, "allow-non-loopback", false, "allow a non-loopback --http or --tcp address (--tcp also needs --insecure-no-auth-sockets)")
	fs.BoolVar(&f.plainHTTP, "insecure-plaintext", false, "with --allow-non-loopback and no --tls-cert: serve plain HTTP on a non-loopback --http address (behind a balancer terminating TLS)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve --http over TLS with this PEM certificate chain ("+tlsReloadHelp+")")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fs.Var(&f.trusted, "trusted-proxy", "a balancer (CIDR or address) whose connections begin with a PROXY protocol header naming the client; repeatable")
	fs.BoolVar(&f.testAuth, "insecure-test-auth", false, "TESTS ONLY: accept any bearer token, unverified, as the caller's principal")
}

// limitFlags defines the limits. Their help prints the libraries' Default*
// constants, so that it cannot go stale (TestServeHelpDefaults); "(0: X)"
// is the form that test reads.
func (f *serveFlags) limitFlags(fs *flag.FlagSet) {
	const unlimited = "; negative: no limit, unsafe"
	fs.IntVar(&f.maxBody, "max-body", 0, fmt.Sprintf("largest HTTP request body in bytes, --legacy-path included (0: %s%s)", sizeString(streamhttp.DefaultMaxBodyBytes), unlimited))
	fs.IntVar(&f.maxHeader, "max-header", 0, fmt.Sprintf("largest HTTP header block in bytes (0: %s)", sizeString(streamhttp.DefaultMaxHeaderBytes)))
	fs.DurationVar(&f.keepAlive, "keepalive", 0, fmt.Sprintf("SSE keep-alive comment interval (0: %s)", streamhttp.DefaultKeepAlive))
	fs.IntVar(&f.perIP, "max-conns-per-ip", 0, fmt.Sprintf("connections per client IP before 429 (HTTP) or a close (TCP) (0: %d%s)", streamhttp.DefaultMaxConnsPerIP, unlimited))
	fs.IntVar(&f.maxConns, "max-conns", 0, fmt.Sprintf("HTTP connections in all before 503 (0: %d%s)", streamhttp.DefaultMaxConns, unlimited))
	fs.IntVar(&f.sockConns, "max-socket-conns", 0, fmt.Sprintf("TCP and Unix socket connections in all; more are closed at once (0: %d%s)", socket.DefaultMaxConns, unlimited))
	fs.IntVar(&f.eventLoops, "event-loops", 0, "gnet event loops of the TCP and Unix listeners (0: GOMAXPROCS-1, at least 1)")
	fs.BoolVar(&f.compress, "compress", false, fmt.Sprintf("gzip/zstd JSON replies of %s or more when the client accepts it", sizeString(streamhttp.DefaultCompressMinBytes)))
	fs.DurationVar(&f.grace, "grace", stdio.DefaultGrace, "how long in-flight requests may finish after stdin ends")
	fs.IntVar(&f.maxLine, "max-line", 0, fmt.Sprintf("largest accepted message in bytes on stdio and sockets, --stdio-legacy included (0: %s%s)", sizeString(framing.DefaultMaxLine), unlimited))
	fs.DurationVar(&f.progress, "progress-interval", 0, fmt.Sprintf("minimum time between progress notifications of one request (0: %s; negative: no rate limit)", engine.DefaultProgressInterval))
}

// perCallerFlags defines the limits per caller: the authenticated
// principal, or an anonymous HTTP client's IP (see docs/limits.md).
func (f *serveFlags) perCallerFlags(fs *flag.FlagSet) {
	const unlimited = "; negative: no limit, unsafe"
	fs.IntVar(&f.listensPerPrincipal, "max-listens-per-principal", 0, fmt.Sprintf("open subscriptions/listen streams per caller before 429 (0: %d%s)", engine.DefaultMaxListensPerPrincipal, unlimited))
	fs.IntVar(&f.inFlightPerPrincipal, "max-in-flight-per-principal", 0, fmt.Sprintf("requests running on workers per caller before 429 (0: %d%s)", engine.DefaultMaxInFlightPerPrincipal, unlimited))
	fs.Float64Var(&f.ratePerPrincipal, "rate-per-principal", 0, "requests per second one caller may sustain, a token bucket; past it 429 with Retry-After (default 0: no rate limit)")
	fs.IntVar(&f.rateBurst, "rate-burst", 0, "the burst of --rate-per-principal, in requests (default 0: one second's worth)")
	fs.IntVar(&f.sessionsPerPrincipal, "max-sessions-per-principal", 0, fmt.Sprintf("--legacy-path sessions per authenticated principal before 429 (0: %d%s)", legacy.DefaultMaxSessionsPerPrincipal, unlimited))
	fs.IntVar(&f.sessionsPerIP, "max-sessions-per-ip", 0, fmt.Sprintf("--legacy-path sessions per client IP before 429 (0: %d%s)", legacy.DefaultMaxSessionsPerIP, unlimited))
}

func (f *serveFlags) opsFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to this file until the server stops")
	fs.StringVar(&f.memProfile, "memprofile", "", "write an allocation profile to this file when the server stops")
	fs.StringVar(&f.logLevel, "log-level", "info", "stderr log level: debug, info, warn, error")
	fs.StringVar(&f.state, "state", "memory", "where drafts and change cues live: memory, or redis://HOST:PORT/DB shared by replicas")
	fs.StringVar(&f.stateKeyFile, "state-key-file", "", "requestState HMAC keys, one a line in hex or base64:… (first signs, all verify; see package mrtr); default: $"+mrtr.KeysEnv+" (comma-separated), else a random key per process (refused with a shared --state unless --ephemeral-state-key)")
	fs.StringVar(&f.trace, "trace", "", "OpenTelemetry spans of every request, as JSON, to stdout or stderr (W3C traceparent read from _meta or the HTTP header; see observe/otelmcp)")
	fs.StringVar(&f.admin, "admin", "", "serve /metrics, /healthz and /readyz on this address (e.g. 127.0.0.1:9090; loopback only; /debug/pprof/ with --admin-pprof)")
	fs.BoolVar(&f.adminNonLoopback, "admin-allow-non-loopback", false, "allow a non-loopback --admin address (exposes metrics and pprof)")
}

// sizeString writes a byte count the way the help reads best: "4 MiB",
// "16 KiB", else "1000 bytes".
func sizeString(n int) string {
	switch {
	case n != 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n != 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
