package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
	"github.com/mcpwire/mcpwire/internal/refserver"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// serve is `mcpwire serve`: flags, then configuration, then the server.
func serve(ctx context.Context, args []string) error {
	c, err := parseServeFlags(args).config()
	if err != nil {
		return err
	}
	return runServe(ctx, c)
}

// runServe opens the state, starts the engine, the transports and the
// admin listener, serves until stdin ends, a signal arrives or a transport
// fails, then shuts everything down in order.
func runServe(ctx context.Context, c *serveConfig) error {
	shared, err := openState(ctx, c.state, c.stateOpt, c.log)
	if err != nil {
		return err
	}
	defer func() {
		if e := shared.Close(); e != nil {
			c.log.Warn("state close", "err", e)
		}
	}()
	srv, stopTracing, err := startEngine(ctx, c, shared)
	if err != nil {
		return err
	}
	defer stopTracing()
	dumpStatsOnSignal(ctx) // SIGUSR1: one "stats ..." line on stderr
	stopProfiles, err := startProfiles(c.cpuProfile, c.memProfile)
	if err != nil {
		return err
	}
	defer stopProfiles()
	t := &transports{srv: srv, log: c.log, failed: make(chan error, 2)}
	if err := t.start(ctx, c, shared); err != nil {
		return err
	}
	adm, err := startAdmin(c.adminSetup(t, shared))
	if err != nil {
		return err
	}
	err = t.serve(ctx, c, shared, adm)
	t.shutdown(c.grace, adm)
	return exitError(err, c.log)
}

// startEngine makes the reference server with the state and the tracing
// hooks, and starts it (it subscribes to the backplane, if any).
func startEngine(ctx context.Context, c *serveConfig, shared *sharedState) (*engine.Server, func(), error) {
	hooks, stopTracing, err := startTracing(c.trace, c.stdio != nil)
	if err != nil {
		return nil, nil, err
	}
	opt := c.ref
	opt.Store, opt.Backplane, opt.Hooks = shared.Store, shared.Backplane, hooks
	srv, err := refserver.New(opt)
	if err == nil {
		if err = srv.Start(ctx); err != nil {
			err = fmt.Errorf("serve: --state %s: %w", netutil.RedactURL(c.state), err)
		}
	}
	if err != nil {
		stopTracing()
		return nil, nil, err
	}
	return srv, stopTracing, nil
}

// startProfiles starts --cpuprofile; the returned stop writes
// --memprofile, then stops the CPU profile.
func startProfiles(cpu, mem string) (stop func(), err error) {
	stopCPU, err := startCPUProfile(cpu)
	if err != nil {
		return nil, err
	}
	if mem == "" {
		return stopCPU, nil
	}
	runtime.MemProfileRate = 4096
	return func() {
		if f, err := os.Create(mem); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		stopCPU()
	}, nil
}

// adminSetup is what the admin listener reports on: the engine, the
// transports started and the state.
func (c *serveConfig) adminSetup(t *transports, shared *sharedState) adminSetup {
	a := c.admin
	a.srv, a.hs, a.ss, a.shared, a.queued = t.srv, t.hs, t.ss, shared, c.queued
	a.ls = t.ls
	return a
}

// transports are the listeners serve runs on one engine.
type transports struct {
	srv    *engine.Server
	log    *slog.Logger
	hs     *streamhttp.Server
	ls     *legacy.Server // --legacy-path or --stdio-legacy
	ss     *socket.Server
	failed chan error // a listener that stopped serving
}

// start starts the HTTP and socket listeners that c asks for.
func (t *transports) start(ctx context.Context, c *serveConfig, shared *sharedState) error {
	if c.http != nil {
		if err := t.startHTTP(ctx, c.http, c.legacyConfig(shared, true)); err != nil {
			return err
		}
	}
	if c.stdio != nil && c.stdioLegacy && t.ls == nil {
		// Made here, before the admin listener, so that its counters
		// (mcpwire_legacy_*, the per-caller session refusals) are exported.
		t.ls = legacy.New(t.srv, c.legacyConfig(shared, false))
	}
	if c.sockets != nil {
		return t.startSockets(c.sockets)
	}
	return nil
}

// legacyConfig is the legacy endpoint's configuration; on HTTP its
// sessions belong to the principal the HTTP transport authenticated.
func (c *serveConfig) legacyConfig(shared *sharedState, onHTTP bool) legacy.Config {
	cfg := c.legacy
	cfg.Store = shared.Store
	if onHTTP {
		cfg.Principal = streamhttp.PrincipalFrom
	}
	return cfg
}

func (t *transports) startHTTP(ctx context.Context, h *httpSetup, lcfg legacy.Config) error {
	cfg := h.cfg
	var err error
	if cfg.TLS, err = serverTLS(ctx, h.tlsCert, h.tlsKey, t.log); err != nil {
		return err
	}
	if h.testAuth {
		t.log.Warn("--insecure-test-auth: every bearer token is accepted as a principal; never use this outside tests")
		cfg.Authenticate = testPrincipal
	}
	if h.oauth != nil {
		h.oauth.Install(&cfg)
		t.log.Info("mcpwire OAuth resource server", "metadata", h.oauth.MetadataURL())
	}
	if h.legacyPath != "" {
		lcfg.ResourceMetadata = cfg.ResourceMetadata
		t.ls = legacy.New(t.srv, lcfg)
		cfg.Mounts = map[string]http.Handler{h.legacyPath: t.ls.Handler()}
	}
	t.hs = streamhttp.New(t.srv, cfg)
	ln, err := t.hs.Listen(h.addr)
	if errors.Is(err, streamhttp.ErrPlaintext) {
		return errors.New("serve: a non-loopback --http address needs --tls-cert and --tls-key, or --insecure-plaintext for plain HTTP")
	}
	if err != nil {
		return err
	}
	scheme := "http://"
	if cfg.TLS != nil {
		scheme = "https://"
	}
	t.log.Info("mcpwire serving Streamable HTTP", "url", scheme+ln.Addr().String()+cfg.Path)
	if t.ls != nil {
		t.log.Info("mcpwire serving MCP 2025-11-25 to old clients", "url", scheme+ln.Addr().String()+h.legacyPath)
	}
	go func() { t.failed <- t.hs.Serve(ln) }()
	return nil
}

func (t *transports) startSockets(s *socketSetup) error {
	t.ss = socket.New(t.srv, s.cfg)
	for _, l := range s.listen {
		if err := t.ss.Listen(l[0], l[1]); err != nil {
			return err
		}
	}
	if err := t.ss.Start(); err != nil {
		return err
	}
	for _, a := range t.ss.Addrs() {
		t.log.Info("mcpwire serving line-framed JSON-RPC", "network", a.Network(), "addr", a.String())
	}
	go func() { t.failed <- t.ss.Wait() }()
	return nil
}

// serve serves stdio until stdin ends, or without --stdio waits for a
// signal or a failed listener; it returns why it stopped.
func (t *transports) serve(ctx context.Context, c *serveConfig, shared *sharedState, adm *adminListener) error {
	if c.stdio == nil {
		return awaitStop(ctx, t.failed)
	}
	t.log.Info("mcpwire serving on stdio")
	opt := *c.stdio
	if c.stdioLegacy {
		opt.Upgrade = t.ls.StdioUpgrade // made by start
	}
	adm.serving(true)
	err := stdio.Serve(ctx, t.srv, opt)
	adm.serving(false)
	return err
}

// awaitStop waits for ctx to end (main cancels it on SIGINT and SIGTERM)
// or for a listener to stop serving, and returns why. Signals reach serve
// only through ctx, so that the platforms' signal sets stay in main.
func awaitStop(ctx context.Context, failed <-chan error) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-failed:
		return err
	}
}

// shutdown stops everything once, in order, within grace: /readyz turns
// 503, each transport stops itself (its listen streams get their final
// result, its in-flight requests the rest of the grace), then the engine,
// then the admin listener.
func (t *transports) shutdown(grace time.Duration, adm *adminListener) {
	adm.drain()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	warn := func(what string, err error) {
		if err != nil {
			t.log.Warn(what, "err", err)
		}
	}
	if t.ls != nil {
		warn("legacy endpoint shutdown", t.ls.Shutdown(ctx))
	}
	if t.hs != nil {
		warn("HTTP transport shutdown", t.hs.Shutdown(ctx))
	}
	if t.ss != nil {
		warn("socket transport shutdown", t.ss.Shutdown(ctx))
	}
	warn("engine shutdown", t.srv.Shutdown(ctx))
	adm.shutdown(ctx, t.log)
}

// exitError is serve's result for how serving ended: stdout closed by the
// client and a signal are normal ends.
func exitError(err error, log *slog.Logger) error {
	switch {
	case errors.Is(err, stdio.ErrOutputClosed):
		log.Info("stdout closed by the client; exiting")
		return nil
	case errors.Is(err, context.Canceled):
		log.Info("signal received; exiting")
		return nil
	}
	return err
}
