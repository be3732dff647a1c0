package main

// The child mode (clientrt -child): one client in its own process, so that
// getrusage(RUSAGE_SELF) and runtime.MemStats count that client and
// nothing else (a stdio server is a child of this process and is not in
// RUSAGE_SELF; an HTTP or TCP server is the parent's child).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwire/mcpwire/client/target"
)

// The call every client makes, and the text its result must carry.
const (
	echoTool = "echo"
	echoText = "hello world"
)

// childResult is the child's one line of JSON on stdout.
type childResult struct {
	Client    string  `json:"client"`
	Transport string  `json:"transport"`
	Callers   int     `json:"callers"`
	Protocol  string  `json:"protocol"` // the revision the client negotiated
	Calls     int64   `json:"calls"`    // completed in the measured window, errors included
	Errors    int64   `json:"errors"`   // failed calls and wrong echo texts
	Mismatch  int64   `json:"mismatch"` // of which: a result that was not the echo text
	ElapsedS  float64 `json:"elapsed_s"`
	MeanUS    float64 `json:"mean_us"`
	P50US     float64 `json:"p50_us"`
	P99US     float64 `json:"p99_us"`
	CPUUS     int64   `json:"cpu_us"`  // user+system of this process over the window
	Mallocs   uint64  `json:"mallocs"` // runtime.MemStats.Mallocs delta over the window
	FirstErr  string  `json:"first_error,omitempty"`
}

// caller is one connected client.
type caller struct {
	call     func(ctx context.Context) error // one tools/call echo, result checked
	close    func() error
	protocol string
}

// errMismatch marks a result that is not the echo of the text sent.
var errMismatch = errors.New("result is not the echo text")

func checkEcho(isError bool, texts []string) error {
	if isError || len(texts) != 1 || texts[0] != echoText {
		return fmt.Errorf("%w: isError=%v texts=%q", errMismatch, isError, texts)
	}
	return nil
}

// sdkHTTPClient is the http.Client handed to go-sdk and mcp-go: net/http's
// default transport with a keep-alive pool as large as the number of
// callers. With the defaults (http.DefaultTransport keeps 2 idle
// connections per host) 16 callers would open and close connections all
// the time; mcpwire's transport keeps up to 64 (Config.MaxConns).
func sdkHTTPClient(callers int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(callers, 2)
	tr.MaxIdleConns = max(callers, 100)
	return &http.Client{Transport: tr}
}

// connect opens client kind ("mcpwire", "go-sdk", "mcp-go") on transport
// ("http": addr is the URL; "tcp": addr is host:port; "stdio": argv is the
// server's command line).
func connect(ctx context.Context, kind, transport, addr string, argv []string, callers int) (*caller, error) {
	if transport == "stdio" && len(argv) == 0 {
		return nil, errors.New("stdio: no server command")
	}
	args := map[string]any{"text": echoText}
	switch kind {
	case "mcpwire":
		var tgt string
		switch transport {
		case "http":
			tgt = addr
		case "tcp":
			tgt = "tcp://" + addr
		case "stdio":
			tgt = "stdio:" + shellQuote(argv)
		default:
			return nil, fmt.Errorf("mcpwire: unknown transport %q", transport)
		}
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		c, err := target.Open(tgt, target.Config{Logger: logger, StopWait: 2 * time.Second})
		if err != nil {
			return nil, err
		}
		if _, err := c.Probe(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("probe: %w", err)
		}
		return &caller{
			protocol: c.ProtocolVersion() + " (" + c.Era().String() + ")",
			close:    c.Close,
			call: func(ctx context.Context) error {
				res, err := c.CallTool(ctx, echoTool, args, nil)
				if err != nil {
					return err
				}
				var texts []string
				for _, b := range res.Content {
					if b.Type == "text" {
						texts = append(texts, b.Text)
					}
				}
				return checkEcho(res.IsError, texts)
			},
		}, nil

	case "go-sdk":
		var t mcp.Transport
		switch transport {
		case "http":
			t = &mcp.StreamableClientTransport{Endpoint: addr, HTTPClient: sdkHTTPClient(callers)}
		case "stdio":
			t = &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}
		default:
			return nil, fmt.Errorf("go-sdk: no %s transport", transport)
		}
		cl := mcp.NewClient(&mcp.Implementation{Name: "clientrt-gosdk", Version: "0.1.0"}, nil)
		cs, err := cl.Connect(ctx, t, nil)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		return &caller{
			protocol: cs.InitializeResult().ProtocolVersion,
			close:    cs.Close,
			call: func(ctx context.Context) error {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: echoTool, Arguments: args})
				if err != nil {
					return err
				}
				var texts []string
				for _, c := range res.Content {
					if t, ok := c.(*mcp.TextContent); ok {
						texts = append(texts, t.Text)
					}
				}
				return checkEcho(res.IsError, texts)
			},
		}, nil

	case "mcp-go":
		var c *mcpgoclient.Client
		switch transport {
		case "http":
			var err error
			c, err = mcpgoclient.NewStreamableHttpClient(addr, mcpgotransport.WithHTTPBasicClient(sdkHTTPClient(callers)))
			if err != nil {
				return nil, err
			}
			if err := c.Start(ctx); err != nil {
				return nil, fmt.Errorf("start: %w", err)
			}
		case "stdio":
			var err error
			// NewStdioMCPClient starts the server and the transport.
			c, err = mcpgoclient.NewStdioMCPClient(argv[0], os.Environ(), argv[1:]...)
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("mcp-go: no %s transport", transport)
		}
		var init mcpgo.InitializeRequest
		init.Params.ClientInfo = mcpgo.Implementation{Name: "clientrt-mcpgo", Version: "0.1.0"}
		if _, err := c.Initialize(ctx, init); err != nil {
			c.Close()
			return nil, fmt.Errorf("initialize: %w", err)
		}
		return &caller{
			protocol: c.ProtocolVersion(),
			close:    c.Close,
			call: func(ctx context.Context) error {
				var req mcpgo.CallToolRequest
				req.Params.Name = echoTool
				req.Params.Arguments = args
				res, err := c.CallTool(ctx, req)
				if err != nil {
					return err
				}
				var texts []string
				for _, b := range res.Content {
					if t, ok := mcpgo.AsTextContent(b); ok {
						texts = append(texts, t.Text)
					}
				}
				return checkEcho(res.IsError, texts)
			},
		}, nil
	}
	return nil, fmt.Errorf("unknown client %q", kind)
}

// shellQuote joins argv for a stdio: target (POSIX single quotes).
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// counters of one caller goroutine.
type counters struct {
	h        hist
	calls    int64
	errors   int64
	mismatch int64
	firstErr error
}

// loop runs callers closed loops of c.call until stop, each with its own
// histogram (no allocation, no shared state but the stop flag).
func loop(c *caller, callers int, d time.Duration) ([]*counters, time.Duration) {
	var stop atomic.Bool
	res := make([]*counters, callers)
	for i := range res {
		res[i] = &counters{}
	}
	var wg sync.WaitGroup
	start := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	for i := range callers {
		wg.Add(1)
		go func(k *counters) {
			defer wg.Done()
			ctx := context.Background()
			for !stop.Load() {
				t0 := time.Now()
				err := c.call(ctx)
				k.h.record(time.Since(t0))
				k.calls++
				if err != nil {
					k.errors++
					if errors.Is(err, errMismatch) {
						k.mismatch++
					}
					if k.firstErr == nil {
						k.firstErr = err
					}
					time.Sleep(time.Millisecond) // a dead server must not make this spin
				}
			}
		}(res[i])
	}
	wg.Wait()
	return res, time.Since(start)
}

func cpuUS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) + ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}

// runChild is `clientrt -child`: connect, warm up, measure, print one JSON
// line. The exit status is 0 whenever the JSON was printed (errors are in
// it) and 1 when the client could not be set up.
func runChild(args []string) int {
	fs := flag.NewFlagSet("child", flag.ExitOnError)
	kind := fs.String("client", "", "mcpwire, go-sdk or mcp-go")
	transport := fs.String("transport", "", "http, stdio or tcp")
	addr := fs.String("addr", "", "URL (http) or host:port (tcp); stdio: the server command follows the flags")
	callers := fs.Int("c", 1, "concurrent callers")
	d := fs.Duration("d", 5*time.Second, "measured duration")
	warmup := fs.Duration("warmup", time.Second, "unmeasured warm-up")
	_ = fs.Parse(args)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c, err := connect(ctx, *kind, *transport, *addr, fs.Args(), *callers)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "clientrt child: %s over %s: %v\n", *kind, *transport, err)
		return 1
	}
	defer c.close()
	// One checked call before anything is timed.
	if err := c.call(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "clientrt child: %s over %s: first call: %v\n", *kind, *transport, err)
		return 1
	}
	if *warmup > 0 {
		loop(c, *callers, *warmup)
	}

	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuUS()
	ks, elapsed := loop(c, *callers, *d)
	cpu1 := cpuUS()
	runtime.ReadMemStats(&ms1)

	out := childResult{Client: *kind, Transport: *transport, Callers: *callers, Protocol: c.protocol,
		ElapsedS: elapsed.Seconds(), CPUUS: cpu1 - cpu0, Mallocs: ms1.Mallocs - ms0.Mallocs}
	var h hist
	for _, k := range ks {
		h.merge(&k.h)
		out.Calls += k.calls
		out.Errors += k.errors
		out.Mismatch += k.mismatch
		if out.FirstErr == "" && k.firstErr != nil {
			out.FirstErr = k.firstErr.Error()
		}
	}
	out.MeanUS = h.mean() / 1e3
	out.P50US = h.quantile(0.50) / 1e3
	out.P99US = h.quantile(0.99) / 1e3
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return 0
}
