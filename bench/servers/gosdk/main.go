// Command gosdk is the go-sdk row of the comparison: the echo {text} tool
// (and the touch {uri} tool for the fan-out run) on
// github.com/modelcontextprotocol/go-sdk, written the way that SDK's
// documentation shows (typed mcp.AddTool, NewStreamableHTTPHandler).
//
//	gosdk -http 127.0.0.1:PORT   stateless Streamable HTTP, JSON responses, endpoint /mcp
//	gosdk                        stdio (newline-delimited JSON on stdin/stdout)
//
// SIGUSR1 writes a stats line to stderr (see bench/internal/procstats).
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwire/mcpwire/bench/internal/procstats"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

type touchArgs struct {
	URI string `json:"uri" jsonschema:"the resource that changed"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "v1.8.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{Subscribe: true},
		},
		// Subscriptions to any URI are accepted (the fan-out run listens on test://load).
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Signals that the resource uri changed"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in touchArgs) (*mcp.CallToolResult, any, error) {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "updated " + in.URI}}}, nil, nil
		})
	return s
}

func main() {
	addr := flag.String("http", "", "serve stateless Streamable HTTP on this address (endpoint /mcp); stdio when empty")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file until the server stops (SIGTERM/SIGINT or stdin EOF)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gosdk: ")
	procstats.OnSignal()
	if *cpuProfile != "" {
		stopProfile := procstats.StartCPUProfile(*cpuProfile)
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer()
	if *addr == "" {
		if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
