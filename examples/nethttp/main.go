// Command nethttp embeds mcpwire in an existing net/http service.
//
// The service keeps its own routes (here /hello); the MCP endpoint is one
// more route (/mcp) served by streamhttp's net/http adapter; /metrics
// exports the engine's counters, gauges and request-duration histograms
// in the Prometheus format (observe/metrics); and every MCP request gets an
// OpenTelemetry span (observe/otelmcp), parented on the traceparent the
// client sent in _meta or in the HTTP header.
//
//	go run ./examples/nethttp -addr 127.0.0.1:8080
//	mcpwire call http://127.0.0.1:8080/mcp greet '{"name":"Ada"}'
//	curl -s 127.0.0.1:8080/metrics | grep mcpwire_request_duration
//
// Spans are printed as JSON on stderr; a real service passes its own
// TracerProvider (an OTLP exporter, say) instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/metrics"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address of the service (loopback: the MCP endpoint refuses others without TLS)")
	spans := flag.Bool("spans", true, "print the OpenTelemetry spans as JSON on stderr")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var tp trace.TracerProvider
	if *spans {
		exp, err := stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
		if err != nil {
			log.Fatal(err)
		}
		sdk := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer func() { _ = sdk.Shutdown(context.Background()) }()
		tp = sdk
	}
	err := run(ctx, *addr, tp, func(a string) {
		log.Printf("serving http://%s: MCP at /mcp, metrics at /metrics, the service's own /hello", a)
	})
	if err != nil {
		log.Fatal(err)
	}
}

// newEngine is the MCP side: one tool whose arguments the engine checks
// against its schema before the handler runs, and a span per request.
func newEngine(tp trace.TracerProvider) (*engine.Server, error) {
	srv := engine.New(engine.Config{
		Name:  "nethttp-example",
		Hooks: otelmcp.Hooks(otelmcp.Config{TracerProvider: tp}),
	})
	err := srv.AddTool(engine.Tool{
		Name:        "greet",
		Description: "Greets someone by name",
		InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Handler: func(c *engine.Call) error {
			var in struct {
				Name string `json:"name"`
			}
			if err := c.Bind(&in); err != nil {
				return err
			}
			// The handler's span (and any of the service's own) is reachable
			// from the call, which is a context.Context.
			trace.SpanFromContext(c).AddEvent("greeting")
			c.Text("Hello, " + in.Name + "!")
			return nil
		},
	})
	return srv, err
}

// run serves until ctx ends, then shuts down in order: the MCP transport
// (its listen streams get their final result), the HTTP server, the
// engine. ready gets the bound address.
func run(ctx context.Context, addr string, tp trace.TracerProvider, ready func(addr string)) error {
	srv, err := newEngine(tp)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := streamhttp.New(srv, streamhttp.Config{})
	mcp, err := hs.Handler(ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "the service's own route")
	})
	mux.Handle("/mcp", mcp)
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics.Registry(metrics.New(srv)), promhttp.HandlerOpts{}))

	server := &http.Server{
		Handler:           mux,
		ConnContext:       hs.ConnContext, // with NetListener: the B5 framing check on net/http
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(hs.NetListener(ln)) }()
	ready(ln.Addr().String())

	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	err = server.Shutdown(sctx)
	if e := srv.Shutdown(sctx); err == nil {
		err = e
	}
	if e := <-served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}
