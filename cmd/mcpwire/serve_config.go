package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/internal/refserver"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/state/redisstate"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// serveConfig is what serve runs: the transports' configurations, built
// from the flags and checked before anything is opened or listens. Each
// transport's part is nil when it is not served.
type serveConfig struct {
	log                    *slog.Logger
	ref                    refserver.Config // run adds the state and the tracing hooks
	state, trace           string
	stateOpt               redisstate.Config // --state-tls-*, --state-min-replicas; openState adds the logger
	cpuProfile, memProfile string
	grace                  time.Duration // for stdin's end and for every transport's shutdown

	http        *httpSetup
	sockets     *socketSetup
	stdio       *stdio.Config
	stdioLegacy bool          // --stdio-legacy: stdio upgrades an initialize to 2025-11-25
	legacy      legacy.Config // for --legacy-path and --stdio-legacy; run adds the store
	queued      *stdio.Queued // the stdio output gauge, for the admin listener
	admin       adminSetup    // run adds what it reports on
}

// httpSetup is --http: the address and the parts of its Config that need
// run (TLS certificates, the legacy mount).
type httpSetup struct {
	addr, legacyPath string
	cfg              streamhttp.Config
	tlsCert, tlsKey  string
	testAuth         bool
	oauth            *auth.Verifier // --oauth-*: installed on the listener
}

// socketSetup is --tcp and --unix.
type socketSetup struct {
	listen [][2]string // network, address
	cfg    socket.Config
}

// config checks the flags and builds serve's configuration. The checks
// and their errors come in the order serve has always made them.
func (f *serveFlags) config() (*serveConfig, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if err := f.checkSafe(); err != nil {
		return nil, err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	signer, err := f.stateSigner(log)
	if err != nil {
		return nil, err
	}
	state, err := f.stateSpec(os.Getenv, log)
	if err != nil {
		return nil, err
	}
	stateTLS, err := f.stateTLSConfig()
	if err != nil {
		return nil, err
	}
	minReplicas, err := f.stateMinReplicas()
	if err != nil {
		return nil, err
	}
	c := &serveConfig{
		log: log, state: state, stateOpt: redisstate.Config{TLS: stateTLS, MinReplicas: minReplicas}, trace: f.trace, grace: f.grace,
		cpuProfile: f.cpuProfile, memProfile: f.memProfile,
		ref: refserver.Config{Logger: log, ProgressInterval: f.progress, State: signer,
			Legacy:                 f.legacyPath != "" || f.stdioLegacy,
			MaxListensPerPrincipal: f.listensPerPrincipal, MaxInFlightPerPrincipal: f.inFlightPerPrincipal,
			RatePerPrincipal: f.ratePerPrincipal, RateBurst: f.rateBurst},
		// The legacy endpoint takes the modern transports' message limits.
		legacy: legacy.Config{Logger: log, MaxBodyBytes: f.maxBody, MaxLine: f.maxLine,
			MaxSessionsPerPrincipal: f.sessionsPerPrincipal, MaxSessionsPerIP: f.sessionsPerIP},
		stdioLegacy: f.stdioLegacy,
		queued:      new(stdio.Queued),
		admin:       adminSetup{addr: f.admin, allowNonLoopback: f.adminNonLoopback, stdio: f.stdio, log: log, mrtr: signer},
	}
	if c.admin.token, err = f.adminToken(log); err != nil {
		return nil, err
	}
	c.admin.hosts, c.admin.pprof = f.safe.adminHosts, f.safe.adminPprof
	c.http = f.httpSetup(log)
	if err := f.oauthSetup(c, log); err != nil {
		return nil, err
	}
	c.sockets = f.socketSetup(log)
	if f.stdio {
		c.stdio = &stdio.Config{Grace: f.grace, MaxLine: f.maxLine, Logger: log, Queued: c.queued}
	}
	return c, nil
}

// stateSigner signs the MRTR fixtures' requestState with the keys of
// --state-key-file, else of MCPWIRE_STATE_KEYS, else a random key for
// this process (mrtr.LoadKeys reads both and warns of a key file others
// can read); with a shared --state the random key needs
// --ephemeral-state-key (checkStateKeys).
func (f *serveFlags) stateSigner(log *slog.Logger) (*mrtr.Signer, error) {
	keys, err := mrtr.LoadKeys(f.stateKeyFile, os.Getenv, log)
	if err != nil {
		if f.stateKeyFile != "" {
			return nil, fmt.Errorf("--state-key-file: %w", err)
		}
		return nil, err
	}
	if keys == nil {
		if err := f.checkStateKeys(); err != nil {
			return nil, err
		}
	}
	return mrtr.NewSigner(mrtr.Config{Keys: keys})
}

// check refuses flags that cannot go together.
func (f *serveFlags) check() error {
	if !f.stdio && f.httpAddr == "" && f.tcpAddr == "" && f.unixPath == "" {
		return errors.New("serve: choose a transport: --stdio, --http ADDR, --tcp ADDR, --unix PATH (any combination)")
	}
	switch {
	case f.legacyPath != "" && f.httpAddr == "":
		return errors.New("serve: --legacy-path needs --http")
	case f.legacyPath != "" && (!strings.HasPrefix(f.legacyPath, "/") || f.legacyPath == f.path):
		return fmt.Errorf("serve: --legacy-path %q must be a path other than --path %q", f.legacyPath, f.path)
	case f.stdioLegacy && !f.stdio:
		return errors.New("serve: --stdio-legacy needs --stdio")
	}
	return checkAdminAddr(f.admin, f.adminNonLoopback, f.httpAddr, f.tcpAddr)
}

// httpSetup is --http's configuration; nil without --http.
func (f *serveFlags) httpSetup(log *slog.Logger) *httpSetup {
	if f.httpAddr == "" {
		return nil
	}
	h := &httpSetup{addr: f.httpAddr, legacyPath: f.legacyPath, tlsCert: f.tlsCert, tlsKey: f.tlsKey, testAuth: f.testAuth}
	h.cfg = streamhttp.Config{
		Path: f.path, AllowNonLoopback: f.nonLoopback,
		MaxBodyBytes: f.maxBody, MaxHeaderBytes: f.maxHeader, KeepAlive: f.keepAlive,
		MaxConnsPerIP: f.perIP, MaxConns: f.maxConns, Compression: f.compress, Logger: log,
		TrustedProxies: f.trusted, InsecurePlaintext: f.plainHTTP,
	}
	if f.origins != "" {
		h.cfg.AllowedOrigins = splitList(f.origins)
	}
	if f.hosts != "" {
		h.cfg.AllowedHosts = splitList(f.hosts)
	}
	return h
}

// socketSetup is --tcp and --unix's configuration; nil without either.
func (f *serveFlags) socketSetup(log *slog.Logger) *socketSetup {
	if f.tcpAddr == "" && f.unixPath == "" {
		return nil
	}
	mode, _ := f.unixFileMode() // checked by checkSafe
	s := &socketSetup{cfg: socket.Config{MaxLine: f.maxLine, AllowNonLoopback: f.nonLoopback,
		MaxConns: f.sockConns, MaxConnsPerIP: f.perIP, EventLoops: f.eventLoops, Logger: log,
		InsecureNoAuth: f.safe.noAuthSockets, UnixMode: mode}}
	for _, l := range [][2]string{{"tcp", f.tcpAddr}, {"unix", f.unixPath}} {
		if l[1] != "" {
			s.listen = append(s.listen, l)
		}
	}
	return s
}

// splitList splits a comma-separated flag; "none" is the empty list.
func splitList(v string) []string {
	if v == "none" {
		return []string{}
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
