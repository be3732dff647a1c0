// Command mcpgo is the mcp-go row of the comparison: the echo {text} tool
// (and the touch {uri} tool for the fan-out run) on github.com/mark3labs/mcp-go,
// written the way that SDK's documentation shows.
//
// mcp-go v1.2.1 has no call that sends notifications/resources/updated to
// the stateless subscriptions/listen streams subscribed to a URI
// (SendNotificationToAllClients keeps that method off listen streams by
// design, and the listen sessions it tracks are unexported). touch therefore
// uses a small registry built from public API only: a BeforeSubscriptionsListen
// hook records the stream's session and URIs, AfterSubscriptionsListen and
// OnError drop it, and touch puts one notification on each subscribed
// session's NotificationChannel (non-blocking, as the SDK's own broadcast
// does); the SDK's stream forwarder tags it with the subscriptionId.
//
//	mcpgo -http 127.0.0.1:PORT   stateless Streamable HTTP, endpoint /mcp (JSON replies unless a notification is sent)
//	mcpgo                        stdio (newline-delimited JSON on stdin/stdout)
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
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpwire/mcpwire/bench/internal/procstats"
)

// listeners maps each open listen stream's session to its subscribed URIs.
type listeners struct {
	mu sync.RWMutex
	m  map[server.ClientSession][]string
}

func (l *listeners) add(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
	if sess := server.ClientSessionFromContext(ctx); sess != nil && len(req.Params.Notifications.ResourceSubscriptions) > 0 {
		l.mu.Lock()
		l.m[sess] = slices.Clone(req.Params.Notifications.ResourceSubscriptions)
		l.mu.Unlock()
	}
}

func (l *listeners) remove(ctx context.Context) {
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		l.mu.Lock()
		delete(l.m, sess)
		l.mu.Unlock()
	}
}

// updated queues notifications/resources/updated for uri on every stream
// subscribed to it; a stream whose queue is full misses it.
func (l *listeners) updated(uri string) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
		},
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	for sess, uris := range l.m {
		if slices.Contains(uris, uri) {
			select {
			case sess.NotificationChannel() <- n:
			default:
			}
		}
	}
}

func newServer() *server.MCPServer {
	subs := &listeners{m: map[server.ClientSession][]string{}}
	hooks := &server.Hooks{}
	hooks.AddBeforeSubscriptionsListen(subs.add)
	hooks.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		subs.remove(ctx)
	})
	hooks.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			subs.remove(ctx)
		}
	})
	s := server.NewMCPServer("mcpgo-bench", "v1.2.1",
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithHooks(hooks),
	)
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Returns its text argument unchanged"),
		mcp.WithString("text", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})
	s.AddTool(mcp.NewTool("touch",
		mcp.WithDescription("Signals that the resource uri changed"),
		mcp.WithString("uri", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		uri, err := req.RequireString("uri")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		subs.updated(uri)
		return mcp.NewToolResultText("updated " + uri), nil
	})
	return s
}

func main() {
	addr := flag.String("http", "", "serve stateless Streamable HTTP on this address (endpoint /mcp); stdio when empty")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file until the server stops (SIGTERM/SIGINT or stdin EOF)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("mcpgo: ")
	procstats.OnSignal()
	if *cpuProfile != "" {
		stopProfile := procstats.StartCPUProfile(*cpuProfile)
		defer stopProfile()
	}
	s := newServer()
	if *addr == "" {
		// ServeStdio handles SIGINT/SIGTERM itself and returns at EOF.
		if err := server.ServeStdio(s); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
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
