package docs

// The README's Go blocks, each between "// snippet:begin NAME" and
// "// snippet:end". Each function declares what its snippet assumes
// (srv, ctx, mux…) as parameters; the functions are compiled, not run.

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/observe/admin"
	"github.com/mcpwire/mcpwire/observe/metrics"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

var snippets = []any{snippetHTTP, snippetHTTPS, snippetSocket, snippetPublish, snippetClient, snippetEngine, snippetHooks, snippetMetrics, snippetTyped, snippetTypedPrompt, snippetCatalog, snippetMRTR}

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

// index stands for the embedder's own search in snippetTyped.
type index interface {
	Search(ctx context.Context, q string, n int) ([]struct {
		Title string
		Score float64
	}, error)
}

func snippetTyped(srv *engine.Server, docs index) error {
	// snippet:begin typed-tool
	type SearchIn struct {
		Query string   `json:"query" jsonschema:"what to look for" minLength:"1"`
		Limit int      `json:"limit,omitempty" minimum:"1" maximum:"50"` // omitempty: optional
		Kind  string   `json:"kind,omitempty" enum:"doc,code"`
		Tags  []string `json:"tags,omitempty" maxItems:"5"`
	}
	type Hit struct {
		Title string  `json:"title"`
		Score float64 `json:"score"`
	}
	type SearchOut struct {
		Hits []Hit `json:"hits"`
	}
	return engine.AddTool(srv, engine.Tool{Name: "search", Description: "Searches the docs"},
		func(c *engine.Call, in SearchIn) (SearchOut, error) {
			if in.Limit == 0 {
				in.Limit = 10
			}
			found, err := docs.Search(c, in.Query, in.Limit) // c is the request's context
			if err != nil {
				return SearchOut{}, err // an isError result with the error's text
			}
			out := SearchOut{Hits: []Hit{}}
			for _, d := range found {
				out.Hits = append(out.Hits, Hit{Title: d.Title, Score: d.Score})
			}
			return out, nil // structuredContent, and its JSON as text
		})
	// snippet:end
}

func snippetTypedPrompt(srv *engine.Server) error {
	// snippet:begin typed-prompt
	type ReviewIn struct {
		Topic string  `json:"topic" jsonschema:"what to review"` // required
		Style *string `json:"style,omitempty"`                   // optional
	}
	return engine.AddPrompt(srv, engine.Prompt{Name: "review", Description: "Asks for a review"},
		func(c *engine.Call, in ReviewIn) (mcp.PromptResult, error) {
			text := "Review " + in.Topic
			if in.Style != nil {
				text += " in a " + *in.Style + " style"
			}
			return mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(text)}}}, nil
		})
	// snippet:end
}

func snippetCatalog(db interface {
	Page(ctx context.Context, after string, n int) ([]mcp.Resource, string, error)
	Read(ctx context.Context, uri string) (string, bool, error)
}) *engine.Server {
	// snippet:begin catalog
	srv := engine.New(engine.Config{
		PageSize: 500, // every list method pages with opaque cursors (0: engine.DefaultPageSize)
		// resources/list: the registered resources, then pages of the author's own store.
		ResourceLister: func(c *engine.Call, cursor string, limit int) ([]mcp.Resource, string, error) {
			return db.Page(c, cursor, limit) // next == "": the last page
		},
		// resources/read of a URI neither registered nor matched by a template.
		ResourceReader: func(c *engine.Call, uri string) error {
			text, ok, err := db.Read(c, uri)
			switch {
			case err != nil:
				return err
			case !ok:
				return engine.ErrResourceNotFound(uri)
			}
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: text}}})
		},
	})
	srv.RemoveResource("note://old") // registered ones come and go; listeners hear resources/list_changed
	// snippet:end
	return srv
}

func snippetMRTR(srv *engine.Server, signer *mrtr.Signer) error {
	// snippet:begin mrtr
	// signer, _ := mrtr.NewSigner(mrtr.Config{Keys: keys}) // keys: mrtr.LoadKeys, shared by the replicas
	type DeployIn struct {
		Env string `json:"env"`
	}
	type DeployOut struct {
		Deployed bool `json:"deployed"`
	}
	return engine.AddTool(srv, engine.Tool{Name: "deploy", RequiredClientCapabilities: []string{"elicitation"}},
		func(c *engine.Call, in DeployIn) (DeployOut, error) {
			_, resumed, err := signer.Verify(c) // a forged or expired requestState: -32602
			if err != nil {
				return DeployOut{}, err
			}
			answers, err := mrtr.Responses(c)
			if err != nil {
				return DeployOut{}, err
			}
			ok, err := answers.Elicit("confirm")
			if !resumed || errors.Is(err, mrtr.ErrResponseMissing) {
				// Ask (the result is the input request); the client retries
				// with its answer and this state.
				return DeployOut{}, signer.Ask(c, map[string]mcp.InputRequest{
					"confirm": mrtr.Elicit("Deploy to "+in.Env+"?", `{"type":"object","properties":{}}`),
				}, nil)
			}
			if err != nil {
				return DeployOut{}, err
			}
			return DeployOut{Deployed: ok.Accepted()}, nil
		})
	// snippet:end
}

func snippetAuth(srv *engine.Server, certs *streamhttp.CertFiles) error {
	// snippet:begin auth-embed
	v, err := auth.New(auth.Config{
		Resource:   "https://mcp.example.com/mcp",          // this endpoint: the audience tokens must name
		Issuer:     "https://login.example.com",            // its metadata names the key set (jwks_uri)
		Scopes:     []string{"mcp"},                        // required of every request
		ToolScopes: map[string][]string{"deploy": {"ops"}}, // tools/call deploy needs ops too
	})
	if err != nil {
		return err
	}
	cfg := streamhttp.Config{TLS: certs.TLSConfig(), AllowNonLoopback: true}
	v.Install(&cfg) // Authenticate, Authorize, ResourceMetadata and the metadata's paths
	_ = srv.AddTool(engine.Tool{Name: "deploy", Handler: func(c *engine.Call) error {
		p := auth.PrincipalOf(c) // verified: p.Subject, p.Scopes, p.ClientID, p.Certificate (mTLS)
		c.Text("deployed by " + p.Subject)
		return nil
	}})
	return streamhttp.New(srv, cfg).ListenAndServe("0.0.0.0:8443")
	// snippet:end
}

var _ = snippetAuth
