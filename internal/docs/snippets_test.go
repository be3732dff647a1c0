package docs

// The README's Go blocks, each between "// snippet:begin NAME" and
// "// snippet:end". Each function declares what its snippet assumes
// (srv, ctx, mux…) as parameters; the functions are compiled, not run.

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/admin"
	"github.com/mcpwire/mcpwire/observe/metrics"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

var snippets = []any{snippetHTTP, snippetHTTPS, snippetSocket, snippetPublish, snippetClient, snippetEngine, snippetHooks, snippetMetrics}

func snippetHTTP(ctx context.Context, srv *engine.Server, mux *http.ServeMux) {
	// snippet:begin http-embed
	hs := streamhttp.New(srv, streamhttp.Config{}) // srv is an *engine.Server
	ln, _ := hs.Listen("127.0.0.1:8080")           // refuses non-loopback without AllowNonLoopback
	go hs.Serve(ln)
	defer hs.Shutdown(ctx) // 503 for new POSTs, listen streams completed, in-flight cancelled at ctx's deadline

	h, _ := hs.Handler("127.0.0.1:8080") // the same pipeline as an http.Handler
	mux.Handle("/mcp", h)
	server := &http.Server{Handler: mux, ConnContext: hs.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	// NetListener: per-IP/total connection limits (429/503) and the
	// Content-Length+Transfer-Encoding 400 on net/http too.
	go server.Serve(hs.NetListener(ln))
	// snippet:end
}

func snippetHTTPS(srv *engine.Server) error {
	// snippet:begin https-embed
	cf, err := streamhttp.LoadCertFiles("/etc/mcp/cert.pem", "/etc/mcp/key.pem", streamhttp.CertConfig{})
	if err != nil {
		return err
	}
	hs := streamhttp.New(srv, streamhttp.Config{
		TLS:              cf.TLSConfig(), // new files are picked up within 10 s; cf.Reload() at once
		AllowNonLoopback: true,           // without TLS a public address also needs InsecurePlaintext
	})
	return hs.ListenAndServe("0.0.0.0:8443")
	// snippet:end
}

func snippetSocket(ctx context.Context, srv *engine.Server) {
	// snippet:begin socket-embed
	s := socket.New(srv, socket.Config{})     // srv is an *engine.Server
	_ = s.Listen("tcp", "127.0.0.1:9000")     // loopback unless AllowNonLoopback
	_ = s.Listen("unix", "/run/app/mcp.sock") // a live socket or another file there is an error
	_ = s.Start()                             // bound when it returns; s.Addrs() has the ports
	defer s.Shutdown(ctx)                     // this transport only
	// snippet:end
}

func snippetPublish(srv *engine.Server) {
	// snippet:begin publish
	srv.ResourceUpdated("file:///project/config.json") // to listeners of that URI or of a parent of it
	srv.ToolsChanged()                                 // also published by AddTool / RemoveTool by itself
	srv.Go(func(ctx context.Context) { /* a publisher stopped at Shutdown */ })
	// snippet:end
}

func snippetClient(ctx context.Context) error {
	// snippet:begin client
	c, err := target.Open("stdio:'./server --stdio'", target.Config{}) // or http(s)://…/mcp, tcp://host:port, unix:///path
	if err != nil {
		return err
	}
	defer c.Close() // stdio: close stdin → wait → SIGTERM → wait → SIGKILL (STD-11)
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"}, &client.CallOptions{
		OnProgress: func(p client.Progress) { log.Println(p.Progress, p.Message) }, // sends a progressToken (PROG-01)
	})
	if err != nil {
		return err
	}
	log.Println(res.Text())
	sub, err := c.Listen(ctx, client.Filter{ToolsListChanged: true}) // acknowledged first; re-listens after a drop
	if err != nil {
		return err
	}
	for e := range sub.Events() {
		log.Println(e.Kind, e.Method) // EventRelistened: re-fetch what you cache
	}
	// snippet:end
	return nil
}

func snippetEngine(ctx, shutdownCtx context.Context) error {
	// snippet:begin engine-embed
	srv := engine.New(engine.Config{Name: "my-server", Version: "1.0.0"})
	_ = srv.AddTool(engine.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Handler: func(c *engine.Call) error {
			text, _ := c.ArgBytes("text") // no allocation
			c.TextBytes(text)             // reflection-free text result
			return nil
		},
	})
	err := stdio.Serve(ctx, srv, stdio.Config{}) // returns nil when stdin ends
	_ = srv.Shutdown(shutdownCtx)                // the engine, once, after every transport
	// snippet:end
	return err
}

func snippetHooks(auditHooks engine.Hooks, quota engine.Middleware, tp trace.TracerProvider, allowed func(principal any, tool string) bool) *engine.Server {
	// snippet:begin hooks
	srv := engine.New(engine.Config{
		Hooks:      engine.JoinHooks(auditHooks, otelmcp.Hooks(otelmcp.Config{TracerProvider: tp})),
		Middleware: []engine.Middleware{quota}, // outermost first
		ToolFilter: func(c *engine.Call, t *engine.Tool) bool { return allowed(c.Principal(), t.Name) },
	})
	// snippet:end
	return srv
}

func snippetMetrics(srv *engine.Server, hs *streamhttp.Server) *admin.Server {
	// snippet:begin metrics
	c := metrics.New(srv)          // engine counters, durations, in-flight, listen streams
	c.AddStats("http", hs.Stats()) // every atomic of a transport's Stats
	c.AddGauge("open_connections", "Connections open now.",
		func() float64 { return float64(hs.Gauges().OpenConns) }, "transport", "http")
	prometheus.MustRegister(c) // or metrics.Registry(c): with the Go and process collectors
	a := admin.New(admin.Config{Gatherer: metrics.Registry(c), Checks: []admin.Check{admin.EngineCheck(srv)}})
	// snippet:end
	return a
}
