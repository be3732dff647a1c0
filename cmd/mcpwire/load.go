package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpwire/mcpwire/internal/load"
)

const loadUsage = `usage: mcpwire load [flags] TARGET

Drives an MCP 2026-07-28 server with load and reports throughput, latency
percentiles, errors by kind, bytes and the generator's own CPU per request.

TARGET:
  http://host:port/path      Streamable HTTP (one POST per request, HTTP/1.1 keep-alive)
  https://host:port/path     the same over TLS (--cacert, --client-cert/--client-key; sessions resumed on reconnect)
  stdio:'command args...'    start the command (-c times) and speak line-delimited JSON-RPC on its stdin/stdout
  tcp://host:port            line-delimited JSON-RPC over TCP sockets
  unix:///path/to.sock       line-delimited JSON-RPC over Unix sockets

Workloads (-workload):
  call      tools/call of -tool with -args; _meta carries a progressToken as real clients send it
            (-progress-token=false drops it)
  mix       a weighted mix of methods (-mix); tools/call uses -tool/-args, resources/read uses -uri,
            other methods are sent with params {_meta} only
  progress  tools/call sleep {ms: -sleep-ms, steps: -steps} with a progressToken; reports the
            progress notifications received per call
  listen    opens -listeners subscriptions/listen streams with resourceSubscriptions [-uri]
            (HTTP: one SSE POST and connection each, -c unused; stdio/tcp/unix: spread over the -c
            connections), waits for every acknowledgement, then calls
            tools/call touch {uri} -publish-rate times per second (HTTP, tcp, unix: on a separate
            connection; stdio: on the processes themselves, each serving its own listeners);
            reports deliveries/s and delivery latency from each publish call's send time;
            -unique-uris touches -uri/0, -uri/1, ... (sub-resources of the subscribed URI, so
            no update can collapse into another) and fails the run if any stream misses one

Flags:
`

const loadNotes = `
Measurement:
  Requests started after the warm-up are measured; requests started before the end are drained
  and counted. Closed loop (-rate 0): latency from the send to the final response. Open loop
  (-rate R): request i is due at start + i/R on whichever connection is free, and its latency is
  measured from that intended time (coordinated-omission correction); requests that fell due but
  could not be sent before the end are reported as "unsent". With -n and no -d the run lasts until
  -n measured requests are done.
  Each failed request counts once in "errors": rpc_<code> when the response carries a JSON-RPC
  error, else http_<status>, else timeout, io, connect, bad_response, or tool_error (a tools/call
  result with isError true). Listen streams add listen_failed, listen_ended, listen_dropped.
  client_cpu_us_per_req is this process's user+system CPU over the window divided by requests
  (a stdio server's CPU is not included).

Output: a readable block, or with -json one object on stdout:
  {"target","workload","connections","inflight","duration_s","requests","rps","errors":{...},
   "latency_us":{"p50","p90","p99","p999","max","mean"},"bytes_sent","bytes_recv",
   "client_cpu_us_per_req","deliveries","deliveries_per_s","delivery_latency_us":{...},
   "progress_per_call"}

Reports: -hgrm FILE writes the measured latencies as HdrHistogram's percentile distribution
  text (the Value/Percentile/TotalCount/1/(1-Percentile) table and its #[Mean …] footer, values
  in milliseconds, as wrk2 writes it: HdrHistogram's plotter draws both on one chart). -html FILE
  writes one self-contained page (inline SVG, no script, nothing fetched): the summary,
  responses/s and p50/p99 for each second of the measured window, and the percentile curve.

Examples:
  mcpwire load -c 64 -d 10s http://127.0.0.1:8080/mcp
  mcpwire load -w 64 -d 5s stdio:'bin/mcpwire serve --stdio --log-level warn'
  mcpwire load -rate 20000 -d 30s -json http://127.0.0.1:8080/mcp
  mcpwire load -d 30s -hgrm run.hgrm -html run.html http://127.0.0.1:8080/mcp
  mcpwire load -workload listen -listeners 1000 -publish-rate 50 http://127.0.0.1:8080/mcp
`

func runLoad(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	var cfg load.Config
	fs.StringVar(&cfg.Workload, "workload", load.WorkloadCall, "workload: call, mix, progress or listen")
	fs.StringVar(&cfg.Tool, "tool", load.DefaultTool, "call/mix: the tool of tools/call")
	fs.StringVar(&cfg.Args, "args", load.DefaultArgs, "call/mix: the tool's arguments (a JSON object)")
	withToken := fs.Bool("progress-token", true, "call: send a progressToken in _meta (the standard fixture)")
	fs.StringVar(&cfg.Mix, "mix", load.DefaultMix, "mix: method=weight list")
	fs.IntVar(&cfg.SleepMs, "sleep-ms", load.DefaultSleepMs, "progress: sleep {ms}")
	fs.IntVar(&cfg.Steps, "steps", load.DefaultSteps, "progress: sleep {steps} (progress notifications asked for per call)")
	fs.IntVar(&cfg.Listeners, "listeners", load.DefaultListeners, "listen: number of subscriptions/listen streams")
	fs.StringVar(&cfg.URI, "uri", load.DefaultURI, "listen: the resource URI subscribed to and touched (mix: the resources/read uri)")
	fs.Float64Var(&cfg.PublishRate, "publish-rate", load.DefaultPublishRate, "listen: tools/call touch calls per second")
	fs.BoolVar(&cfg.UniqueURIs, "unique-uris", false, "listen: the k-th touch names its own sub-resource -uri/k (nothing can collapse); a publish that misses a stream fails the run")
	fs.IntVar(&cfg.Conns, "c", load.DefaultConns, "connections: HTTP keep-alive connections, stdio processes (default 1 for stdio), tcp/unix sockets")
	fs.IntVar(&cfg.Inflight, "w", 1, "requests in flight per connection (HTTP: must be 1, no pipelining; stdio/tcp/unix: pipelined window)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop at this many requests/s in all (0: closed loop); latency is measured from the intended send time")
	fs.DurationVar(&cfg.Duration, "d", load.DefaultDuration, "duration of the measurement (ignored when only -n is given)")
	fs.Int64Var(&cfg.Requests, "n", 0, "measured request count (0: none; with -n alone the run ends after n requests)")
	fs.DurationVar(&cfg.Warmup, "warmup", load.DefaultWarmup, "warm-up before the measurement, not recorded")
	fs.DurationVar(&cfg.Timeout, "timeout", load.DefaultTimeout, "per-request timeout (expired requests count as errors of kind \"timeout\")")
	var caFile, certFile, keyFile string
	registerTLSFlags(fs, &caFile, &certFile, &keyFile)
	jsonOut := fs.Bool("json", false, "print one JSON object on stdout at the end instead of the text block")
	progress := fs.String("progress", "auto", "live progress line on stderr every second: auto (when stderr is a terminal), on, off")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the generator to this file")
	hgrmPath := fs.String("hgrm", "", "also write the latency percentile distribution to this file, in HdrHistogram's .hgrm text form (milliseconds; listen: the delivery latencies to FILE with .deliveries before its extension)")
	htmlPath := fs.String("html", "", "also write a self-contained HTML report to this file: throughput and p50/p99 per second, the percentile curve")
	maxErrShare := fs.Float64("max-error-share", load.DefaultMaxErrorShare, "exit non-zero when more than this share of the measured requests failed (1: only when every one did)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), loadNotes)
	}

	// Flags may come before or after TARGET.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	if len(positional) != 1 {
		fs.Usage()
		return errors.New("load: want exactly one TARGET")
	}
	cfg.Target = positional[0]
	cfg.NoProgressToken = !*withToken
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.Requests > 0 && !set["d"] {
		cfg.Duration = 0 // -n alone: run until n requests are done
	}
	if !set["c"] {
		cfg.Conns = 0 // the target's default (1 for stdio)
	}
	if cfg.Conns <= 0 && set["c"] {
		return errors.New("load: -c must be at least 1")
	}
	if cfg.Inflight <= 0 {
		return errors.New("load: -w must be at least 1")
	}
	if cfg.Timeout <= 0 {
		return errors.New("load: -timeout must be positive")
	}
	if cfg.Listeners <= 0 || cfg.PublishRate <= 0 {
		return errors.New("load: -listeners and -publish-rate must be positive")
	}
	var err error
	if cfg.TLS, err = clientTLS(caFile, certFile, keyFile); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if cfg.TLS != nil && !strings.HasPrefix(cfg.Target, "https://") {
		return errors.New("load: --cacert, --client-cert and --client-key need an https:// target")
	}
	tty := load.IsTerminal(os.Stderr)
	switch *progress {
	case "auto":
		if tty {
			cfg.Progress = os.Stderr
		}
	case "on":
		cfg.Progress = os.Stderr
		cfg.ProgressNewline = !tty
	case "off":
	default:
		return fmt.Errorf("load: -progress %q: want auto, on or off", *progress)
	}
	cfg.Log = os.Stderr
	cfg.Timeline = *htmlPath != ""
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()

	res, err := load.Run(ctx, cfg)
	if err != nil {
		if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
			return fmt.Errorf("load: %w (trust the CA that signed it with --cacert)", err)
		}
		return fmt.Errorf("load: %w", err)
	}
	var out io.Writer = os.Stdout
	if *jsonOut {
		err = res.WriteJSON(out)
	} else {
		err = res.WriteText(out)
	}
	if err != nil {
		return err
	}
	if err := writeLoadReports(res, *hgrmPath, *htmlPath); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if err := res.Check(*maxErrShare); err != nil {
		return fmt.Errorf("load: %w", err) // after the report: the figures are still printed
	}
	return nil
}
