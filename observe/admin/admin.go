// Package admin is the operator's listener of an mcpwire server, apart
// from the MCP port: /metrics (Prometheus text format), /healthz
// (liveness: the process answers), /readyz (readiness: not while shutting
// down, nor while a configured dependency such as Redis is unreachable) and
// /debug/pprof/ (the Go profiler).
//
// It listens on loopback unless Config.AllowNonLoopback: pprof and the
// metrics reveal internals and cost CPU on demand, so exposing them is an
// explicit choice. Only GET and HEAD are served.
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
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
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

// Server is the admin listener.
type Server struct {
	cfg      Config
	log      *slog.Logger
	mux      *http.ServeMux
	hs       *http.Server
	draining atomic.Bool
}

// New returns an admin listener for cfg; Listen, then Serve.
func New(cfg Config) *Server {
	if cfg.CheckTimeout == 0 {
		cfg.CheckTimeout = DefaultCheckTimeout // negative stays: none (readyz)
	}
	a := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux()}
	if a.log == nil {
		a.log = slog.Default()
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
	a.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	a.mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	a.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	a.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	a.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	a.hs = &http.Server{
		Handler:           a.mux,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
		// No WriteTimeout: /debug/pprof/profile streams for its seconds.
	}
	return a
}

// Handler returns the admin endpoints as an http.Handler, for mounting in
// an existing server (which then owns the loopback rule).
func (a *Server) Handler() http.Handler { return a.mux }

// Listen opens a TCP listener for addr, refusing a non-loopback address
// unless Config.AllowNonLoopback.
func (a *Server) Listen(addr string) (net.Listener, error) {
	if !a.cfg.AllowNonLoopback && !netutil.IsLoopback(addr) {
		return nil, fmt.Errorf("%w: %s", ErrNonLoopback, addr)
	}
	return net.Listen("tcp", addr)
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
