// Command mcpwire runs the mcpwire reference server and its tools.
//
//	mcpwire serve --stdio        the reference server on stdin/stdout
//	mcpwire probe TARGET         what a server is (era, revision, info, capabilities, tools)
//	mcpwire call TARGET TOOL '{"arg":1}'   one call
//	mcpwire demo                 start the reference server, exercise it end to end, run a short load, stop it
//	mcpwire version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/internal/demo"
	"github.com/mcpwire/mcpwire/internal/refserver"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx, os.Args[2:])
	case "demo":
		err = runDemo(ctx, os.Args[2:])
	case "load":
		err = runLoad(ctx, os.Args[2:])
	case "probe":
		err = runProbe(ctx, os.Args[2:])
	case "call":
		err = runCall(ctx, os.Args[2:])
	case "conformance-client": // hidden: the official suite's client leg runs it (.ci/conformance-client.sh)
		err = runConformanceClient(ctx, os.Args[2:])
	case "version":
		fmt.Println("mcpwire", refserverVersion())
	case "-h", "--help", "help":
		usage()
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpwire:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  mcpwire serve --stdio [flags]   run the reference server on stdin/stdout
  mcpwire serve --http ADDR       run it on Streamable HTTP (combinable with --stdio)
                [--tls-cert FILE --tls-key FILE]   over TLS (HTTPS); `+tlsReloadHelp+`
  mcpwire serve --tcp ADDR | --unix PATH   line-framed JSON-RPC on sockets
  mcpwire serve --http ADDR --state redis://HOST:PORT/DB [--state-key-file FILE] [--trusted-proxy CIDR]
                                  a replica sharing drafts and change cues (deploy/, make cluster)
  mcpwire demo [flags]            run the reference server, exercise it, run a short load, stop it
  mcpwire load [flags] TARGET     load generator against an HTTP, stdio, tcp or unix target (load --help)
  mcpwire probe [--json] TARGET   era, revision, server info, capabilities and tools of any MCP server
  mcpwire call [flags] TARGET METHOD|TOOL [JSON]   one call: result on stdout, progress and errors on stderr
  mcpwire version
`)
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	useStdio := fs.Bool("stdio", false, "serve MCP on stdin/stdout")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8080)")
	tcpAddr := fs.String("tcp", "", "serve line-framed JSON-RPC on this TCP address (e.g. 127.0.0.1:9000)")
	unixPath := fs.String("unix", "", "serve line-framed JSON-RPC on this Unix socket path")
	httpPath := fs.String("path", streamhttp.DefaultPath, "the HTTP endpoint path")
	origins := fs.String("allow-origins", "", "comma-separated Origin allow-list (default: the server's own loopback origins; \"none\" allows none)")
	hosts := fs.String("allow-hosts", "", "comma-separated Host allow-list for loopback listeners (default: localhost, 127.0.0.1, ::1)")
	nonLoopback := fs.Bool("allow-non-loopback", false, "allow a non-loopback --http or --tcp address")
	plainHTTP := fs.Bool("insecure-plaintext", false, "with --allow-non-loopback and no --tls-cert: serve plain HTTP on a non-loopback --http address (behind a balancer terminating TLS)")
	tlsCert := fs.String("tls-cert", "", "serve --http over TLS with this PEM certificate chain ("+tlsReloadHelp+")")
	tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert")
	maxBody := fs.Int("max-body", 0, "largest HTTP request body in bytes (0: 4 MiB)")
	maxHeader := fs.Int("max-header", 0, "largest HTTP header block in bytes (0: 16 KiB)")
	keepAlive := fs.Duration("keepalive", 0, "SSE keep-alive comment interval (0: 15s)")
	perIP := fs.Int("max-conns-per-ip", 0, "connections per client IP before 429 (0: 1024)")
	maxConns := fs.Int("max-conns", 0, "HTTP connections in all before 503 (0: 16384)")
	sockConns := fs.Int("max-socket-conns", 0, "TCP and Unix socket connections in all; more are closed at once (0: 16384)")
	eventLoops := fs.Int("event-loops", 0, "gnet event loops of the TCP and Unix listeners (0: GOMAXPROCS-1, at least 1)")
	compress := fs.Bool("compress", false, "gzip/zstd JSON replies of 1 KiB or more when the client accepts it")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file until the server stops")
	memProfile := fs.String("memprofile", "", "write an allocation profile to this file when the server stops")
	grace := fs.Duration("grace", stdio.DefaultGrace, "how long in-flight requests may finish after stdin ends")
	maxLine := fs.Int("max-line", 0, "largest accepted message in bytes (0: 4 MiB)")
	progress := fs.Duration("progress-interval", 0, "minimum time between progress notifications of one request (0: 50ms)")
	logLevel := fs.String("log-level", "info", "stderr log level: debug, info, warn, error")
	stateSpec := fs.String("state", "memory", "where drafts and change cues live: memory, or redis://HOST:PORT/DB shared by replicas")
	stateKeyFile := fs.String("state-key-file", "", "requestState HMAC keys, one a line in hex (first signs, all verify); default: "+stateKeysEnv+", else a random key per process")
	var trusted prefixList
	fs.Var(&trusted, "trusted-proxy", "a balancer (CIDR or address) whose connections begin with a PROXY protocol header naming the client; repeatable")
	legacyPath := fs.String("legacy-path", "", "also serve MCP 2025-11-25 (sessions, GET stream) to old clients on this path of the --http listener, e.g. /mcp-2025")
	stdioLegacy := fs.Bool("stdio-legacy", false, "with --stdio: a connection whose first message is initialize speaks MCP 2025-11-25 (without it, initialize gets the -32022 of a 2026-07-28-only server)")
	testAuth := fs.Bool("insecure-test-auth", false, "TESTS ONLY: accept any bearer token, unverified, as the caller's principal")
	traceTo := fs.String("trace", "", "OpenTelemetry spans of every request, as JSON, to stdout or stderr (W3C traceparent read from _meta or the HTTP header; see observe/otelmcp)")
	adminAddr := fs.String("admin", "", "serve /metrics, /healthz, /readyz and /debug/pprof/ on this address (e.g. 127.0.0.1:9090; loopback only)")
	adminNonLoopback := fs.Bool("admin-allow-non-loopback", false, "allow a non-loopback --admin address (exposes metrics and pprof)")
	_ = fs.Parse(args)
	if !*useStdio && *httpAddr == "" && *tcpAddr == "" && *unixPath == "" {
		return errors.New("serve: choose a transport: --stdio, --http ADDR, --tcp ADDR, --unix PATH (any combination)")
	}
	switch {
	case *legacyPath != "" && *httpAddr == "":
		return errors.New("serve: --legacy-path needs --http")
	case *legacyPath != "" && (!strings.HasPrefix(*legacyPath, "/") || *legacyPath == *httpPath):
		return fmt.Errorf("serve: --legacy-path %q must be a path other than --path %q", *legacyPath, *httpPath)
	case *stdioLegacy && !*useStdio:
		return errors.New("serve: --stdio-legacy needs --stdio")
	}
	if err := checkAdminAddr(*adminAddr, *adminNonLoopback, *httpAddr, *tcpAddr); err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*logLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	keys, err := loadStateKeys(*stateKeyFile, os.Getenv)
	if err != nil {
		return err
	}
	shared, err := openState(ctx, *stateSpec, log)
	if err != nil {
		return err
	}
	defer func() {
		if e := shared.Close(); e != nil {
			log.Warn("state close", "err", e)
		}
	}()
	hooks, stopTracing, err := startTracing(*traceTo, *useStdio)
	if err != nil {
		return err
	}
	defer stopTracing()
	srv, err := refserver.New(refserver.Options{Logger: log, ProgressInterval: *progress,
		StateKeys: keys, Store: shared.Store, Backplane: shared.Backplane, Hooks: hooks, Legacy: *legacyPath != "" || *stdioLegacy})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil { // subscribes to the backplane, if any
		return fmt.Errorf("serve: --state %s: %w", *stateSpec, err)
	}
	dumpStatsOnSignal(ctx) // SIGUSR1: one "stats ..." line on stderr
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if *memProfile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(*memProfile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	// Every transport shares one engine. Shutdown goes in one order, once:
	// each transport stops itself (its listen streams get their final
	// result, its in-flight requests the grace period), then the engine.
	var hs *streamhttp.Server
	var ls *legacy.Server
	var ss *socket.Server
	transportErr := make(chan error, 2)
	if *httpAddr != "" {
		cfg := streamhttp.Config{
			Path: *httpPath, AllowNonLoopback: *nonLoopback,
			MaxBodyBytes: *maxBody, MaxHeaderBytes: *maxHeader, KeepAlive: *keepAlive,
			MaxConnsPerIP: *perIP, MaxConns: *maxConns, Compression: *compress, Logger: log,
			TrustedProxies: trusted, InsecurePlaintext: *plainHTTP,
		}
		if cfg.TLS, err = serverTLS(ctx, *tlsCert, *tlsKey, log); err != nil {
			return err
		}
		if *testAuth {
			log.Warn("--insecure-test-auth: every bearer token is accepted as a principal; never use this outside tests")
			cfg.Authenticate = testPrincipal
		}
		if *origins != "" {
			cfg.AllowedOrigins = splitList(*origins)
		}
		if *hosts != "" {
			cfg.AllowedHosts = splitList(*hosts)
		}
		if *legacyPath != "" {
			ls = legacy.New(srv, legacy.Config{Store: shared.Store, Logger: log, Principal: streamhttp.PrincipalFrom})
			cfg.Mounts = map[string]http.Handler{*legacyPath: ls.Handler()}
		}
		hs = streamhttp.New(srv, cfg)
		ln, err := hs.Listen(*httpAddr)
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
		log.Info("mcpwire serving Streamable HTTP", "url", scheme+ln.Addr().String()+*httpPath)
		if ls != nil {
			log.Info("mcpwire serving MCP 2025-11-25 to old clients", "url", scheme+ln.Addr().String()+*legacyPath)
		}
		go func() { transportErr <- hs.Serve(ln) }()
	}
	if *tcpAddr != "" || *unixPath != "" {
		ss = socket.New(srv, socket.Config{MaxLine: *maxLine, AllowNonLoopback: *nonLoopback, MaxConns: *sockConns, EventLoops: *eventLoops, Logger: log})
		for _, l := range []struct{ network, addr string }{{"tcp", *tcpAddr}, {"unix", *unixPath}} {
			if l.addr == "" {
				continue
			}
			if err := ss.Listen(l.network, l.addr); err != nil {
				return err
			}
		}
		if err := ss.Start(); err != nil {
			return err
		}
		for _, a := range ss.Addrs() {
			log.Info("mcpwire serving line-framed JSON-RPC", "network", a.Network(), "addr", a.String())
		}
		go func() { transportErr <- ss.Wait() }()
	}
	queued := new(stdio.Queued)
	adm, err := startAdmin(adminSetup{addr: *adminAddr, allowNonLoopback: *adminNonLoopback, srv: srv, hs: hs, ss: ss, shared: shared, stdio: *useStdio, queued: queued, log: log})
	if err != nil {
		return err
	}
	if *useStdio {
		log.Info("mcpwire serving on stdio")
		opt := stdio.Options{Grace: *grace, MaxLine: *maxLine, Logger: log, Queued: queued}
		if *stdioLegacy {
			if ls == nil {
				ls = legacy.New(srv, legacy.Config{Store: shared.Store, Logger: log})
			}
			opt.Upgrade = ls.StdioUpgrade
		}
		adm.serving(true)
		err = stdio.Serve(ctx, srv, opt)
		adm.serving(false)
	} else {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case err = <-transportErr:
		}
	}
	adm.drain() // /readyz: 503 from here on
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if ls != nil {
		if e := ls.Shutdown(sctx); e != nil {
			log.Warn("legacy endpoint shutdown", "err", e)
		}
	}
	if hs != nil {
		if e := hs.Shutdown(sctx); e != nil {
			log.Warn("HTTP transport shutdown", "err", e)
		}
	}
	if ss != nil {
		if e := ss.Shutdown(sctx); e != nil {
			log.Warn("socket transport shutdown", "err", e)
		}
	}
	if e := srv.Shutdown(sctx); e != nil {
		log.Warn("engine shutdown", "err", e)
	}
	adm.shutdown(sctx, log)
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

func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	load := fs.Duration("load", 2*time.Second, "duration of the closing load run")
	window := fs.Int("window", 32, "requests kept in flight during the load run")
	_ = fs.Parse(args)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return demo.Run(ctx, demo.Options{
		Server: []string{self, "serve", "--stdio", "--log-level", "warn"},
		Load:   *load, Window: *window, Out: os.Stdout,
	})
}
