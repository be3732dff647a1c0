// Package admin is the operator's listener of an mcpwire server, apart
// from the MCP port: /metrics (Prometheus text format), /healthz
// (liveness: the process answers), /readyz (readiness: not while shutting
// down, nor while a configured dependency such as Redis is unreachable) and,
// when Config.Pprof asks for it, /debug/pprof/ (the Go profiler).
//
// It listens on loopback unless Config.AllowNonLoopback: pprof and the
// metrics reveal internals and cost CPU on demand, so exposing them is an
// explicit choice. Only GET and HEAD are served.
//
// # Who may ask
//
// A loopback port is reachable from every web page the machine's browser
// opens, through DNS rebinding: a page of evil.example whose name then
// resolves to 127.0.0.1 reads the answers as its own. So every request's
// Host header must name the listener itself (F1): localhost, a loopback
// address, the address the request arrived on, the host Listen was given,
// or one of Config.AllowedHosts. Any other is answered 421 Misdirected
// Request and counted (Stats.BadHost). Config.Token, when set, must come
// as "Authorization: Bearer TOKEN" on every request but /healthz and
// /readyz, which probes must reach without it; a request without it, or
// with another, is answered 401 and counted (Stats.Unauthorized). The
// token is compared in constant time (digests of both sides, so its
// length does not leak either).
//
// /debug/pprof/ is served only with Config.Pprof (404 otherwise): profiles
// cost CPU and show the program's internals. Its cmdline shows the
// process's arguments with every URL password replaced
// (netutil.RedactArgs), never the raw command line.
//
// Importing this package imports net/http/pprof, which also registers its
// handlers on http.DefaultServeMux; a program that serves DefaultServeMux
// elsewhere exposes them there too.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// Config.CheckTimeout (DefaultCheckTimeout, 2 s) can be disabled with a
// negative value. The listener's own bounds are fixed: 5 s to read a
// request's headers, 8 KiB of headers, 60 s of keep-alive idleness, 4
// scrapes of /metrics at once, each given 10 s.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// DefaultCheckTimeout bounds each readiness check.
const DefaultCheckTimeout = 2 * time.Second

// ErrNonLoopback is returned by Listen for a non-loopback address without
// Config.AllowNonLoopback.
var ErrNonLoopback = errors.New("admin: refusing a non-loopback listener without AllowNonLoopback")

// Config configures the admin listener. Its limits follow the package's
// rule (see Limits in the package documentation): 0 is the default,
// negative is no limit.
type Config struct {
	// Gatherer is what /metrics serves (for example metrics.Registry);
	// nil serves 404 there.
	Gatherer prometheus.Gatherer
	// Checks run in order on every /readyz; the first error answers 503
	// with the check's name and the error. Each runs under CheckTimeout.
	Checks []Check
	// CheckTimeout bounds one check; a check still running then fails
	// /readyz. Default DefaultCheckTimeout (2 s); negative means none, so
	// only the prober's request (its context) bounds the checks (unsafe: a
	// hung check then holds every probe).
	CheckTimeout time.Duration
	// AllowNonLoopback lets Listen bind an address other than localhost,
	// 127.0.0.0/8 or ::1.
	AllowNonLoopback bool
	// AllowedHosts are more names (or addresses) the Host header may
	// carry, without port, compared ignoring case: the names a scraper
	// or a balancer uses for this listener. Always allowed: localhost,
	// loopback addresses, the address a request arrived on and the host
	// given to Listen. Others get 421 (see the package documentation).
	AllowedHosts []string
	// Token, when not empty, is the bearer token every request but
	// /healthz and /readyz must carry (401 otherwise).
	Token string
	// Pprof serves /debug/pprof/. Off by default: 404 there.
	Pprof bool
	// Logger receives the listener's errors. nil means slog.Default().
	Logger *slog.Logger
}

// Check is one readiness condition.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// EngineCheck is not ready once srv's Shutdown has begun, nor while its
// backplane (engine.Config.Backplane) is lost.
func EngineCheck(srv *engine.Server) Check {
	return Check{Name: "engine", Check: func(context.Context) error {
		switch {
		case srv.Closing():
			return errors.New("shutting down")
		case !srv.BackplaneUp():
			return errors.New("backplane not connected")
		}
		return nil
	}}
}

// Stats are the admin listener's refusals; read the fields with Load.
type Stats struct {
	BadHost      atomic.Uint64 // 421: a Host header naming neither this listener nor an allowed host (F1)
	Unauthorized atomic.Uint64 // 401: no bearer token, or not Config.Token
}

// Server is the admin listener.
type Server struct {
	cfg      Config
	log      *slog.Logger
	mux      *http.ServeMux
	hs       *http.Server
	draining atomic.Bool
	stats    Stats

	hosts      map[string]bool // lowercased Config.AllowedHosts
	listenHost atomic.Pointer[string]
	token      *[sha256.Size]byte // digest of Config.Token; nil: none required
}

// New returns an admin listener for cfg; Listen, then Serve.
func New(cfg Config) *Server {
	if cfg.CheckTimeout == 0 {
		cfg.CheckTimeout = DefaultCheckTimeout // negative stays: none (readyz)
	}
	a := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), hosts: map[string]bool{}}
	if a.log == nil {
		a.log = slog.Default()
	}
	for _, h := range cfg.AllowedHosts {
		a.hosts[hostName(h)] = true
	}
	if cfg.Token != "" {
		d := sha256.Sum256([]byte(cfg.Token))
		a.token = &d
	}
	if cfg.Gatherer != nil {
		a.mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{
			ErrorLog: slogPrinter{a.log}, MaxRequestsInFlight: 4, Timeout: 10 * time.Second,
		}))
	}
	a.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	a.mux.HandleFunc("GET /readyz", a.readyz)
	if cfg.Pprof {
		a.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		a.mux.HandleFunc("GET /debug/pprof/cmdline", cmdline)
		a.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		a.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		a.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	a.hs = &http.Server{
		Handler:           a,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
		// No WriteTimeout: /debug/pprof/profile streams for its seconds.
	}
	return a
}

// Handler returns the admin endpoints as an http.Handler, for mounting in
// an existing server (which then owns the loopback rule). The Host and
// token checks come with it.
func (a *Server) Handler() http.Handler { return a }

// Stats returns the listener's counters.
func (a *Server) Stats() *Stats { return &a.stats }

// Listen opens a TCP listener for addr, refusing a non-loopback address
// unless Config.AllowNonLoopback. The host of addr is then allowed in the
// Host header.
func (a *Server) Listen(addr string) (net.Listener, error) {
	if !a.cfg.AllowNonLoopback && !netutil.IsLoopback(addr) {
		return nil, fmt.Errorf("%w: %s", ErrNonLoopback, addr)
	}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		h = hostName(h)
		a.listenHost.Store(&h)
	}
	return net.Listen("tcp", addr)
}

// ServeHTTP checks the Host header and the token, then serves the
// endpoints.
func (a *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !a.hostAllowed(r) {
		a.stats.BadHost.Add(1)
		http.Error(w, "misdirected request: this listener does not serve that Host", http.StatusMisdirectedRequest)
		return
	}
	if a.token != nil && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" && !a.tokenOK(r) {
		a.stats.Unauthorized.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpwire-admin"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	a.mux.ServeHTTP(w, r)
}

// hostName is a Host header's or an address's host, as compared: no
// port, no brackets, no final dot, lowercase.
func hostName(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
	return strings.ToLower(h)
}

// hostAllowed reports whether r's Host names this listener (F1).
func (a *Server) hostAllowed(r *http.Request) bool {
	h := hostName(r.Host)
	if h == "" {
		return false
	}
	if h == "localhost" || a.hosts[h] {
		return true
	}
	if lh := a.listenHost.Load(); lh != nil && *lh == h && !isUnspecified(h) {
		return true
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	// The address the request arrived on: a scraper that dials the IP.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(la.String()); err == nil && ap.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}

func isUnspecified(h string) bool {
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsUnspecified()
}

// tokenOK reports whether r carries exactly one Authorization header
// holding Config.Token as a bearer token.
func (a *Server) tokenOK(r *http.Request) bool {
	v := r.Header["Authorization"]
	if len(v) != 1 || len(v[0]) < 7 || !strings.EqualFold(v[0][:7], "bearer ") {
		return false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(v[0][7:])))
	return subtle.ConstantTimeCompare(d[:], a.token[:]) == 1
}

// cmdline is pprof's cmdline with every URL password replaced (F10).
func cmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = fmt.Fprint(w, strings.Join(netutil.RedactArgs(os.Args), "\x00"))
}

// Serve serves ln until Shutdown; it returns nil after Shutdown.
func (a *Server) Serve(ln net.Listener) error {
	if err := a.hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Drain makes /readyz answer 503 from now on: call it when the server
// starts shutting down, before the transports stop, so a balancer stops
// sending new work while the rest drains. /metrics, /healthz and pprof
// go on until Shutdown.
func (a *Server) Drain() { a.draining.Store(true) }

// Shutdown stops the listener, waiting for requests being served until
// ctx ends.
func (a *Server) Shutdown(ctx context.Context) error {
	a.Drain()
	return a.hs.Shutdown(ctx)
}

func (a *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if a.draining.Load() {
		http.Error(w, "not ready: shutting down", http.StatusServiceUnavailable)
		return
	}
	for _, c := range a.cfg.Checks {
		ctx, cancel := r.Context(), context.CancelFunc(func() {})
		if a.cfg.CheckTimeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, a.cfg.CheckTimeout)
		}
		err := c.Check(ctx)
		cancel()
		if err != nil {
			http.Error(w, "not ready: "+c.Name+": "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = w.Write([]byte("ready\n"))
}

// slogPrinter adapts a slog.Logger to promhttp's ErrorLog.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.l.Warn("metrics scrape", "err", fmt.Sprint(v...)) }
