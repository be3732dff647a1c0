// Command replicas is one replica of an MCP server scaled out on Redis:
// run several behind a load balancer (deploy/ has HAProxy and nginx
// examples) with the same -redis URL. Any replica serves any request: a
// note remembered through one is recalled through another by its handle,
// and a change published on one reaches the listen streams held by every
// other.
//
//	replicas -http 127.0.0.1:8081 -redis redis://127.0.0.1:6379/0
//	replicas -http 127.0.0.1:8082 -redis redis://127.0.0.1:6379/0
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/redisstate"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

func main() {
	addr := flag.String("http", "127.0.0.1:8081", "Streamable HTTP address")
	redisURL := flag.String("redis", "redis://127.0.0.1:6379/0", "the Redis every replica shares")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *redisURL, func(a string) { log.Printf("replica: http://%s/mcp", a) }); err != nil {
		log.Fatal(err)
	}
}

// run serves one replica until ctx ends; ready receives its address.
func run(ctx context.Context, addr, redisURL string, ready func(addr string)) error {
	shared, err := redisstate.New(ctx, redisURL, redisstate.Config{}) // a state.Store and a state.Backplane
	if err != nil {
		return err
	}
	defer shared.Close()
	srv := engine.New(engine.Config{Name: "replicas-example", Version: "1.0.0", Backplane: shared})
	if err := srv.Start(ctx); err != nil { // subscribes to the other replicas' change cues
		return err
	}
	if err := addTools(srv, shared); err != nil {
		return err
	}
	hs := streamhttp.New(srv, streamhttp.Config{})
	ln, err := hs.Listen(addr)
	if err != nil {
		return err
	}
	ready(ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-done:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	_ = srv.Shutdown(sctx)
	return err
}

// principal is who a handle belongs to: here everyone is the same caller;
// behind authentication it is the authenticated principal (c.Principal()).
const principal = "anyone"

func addTools(srv *engine.Server, store state.Store) error {
	type note struct {
		Text string `json:"text"`
	}
	type ref struct {
		Handle string `json:"handle" jsonschema:"what remember returned"`
	}
	err := engine.AddTool(srv, engine.Tool{Name: "remember", Description: "Keeps a note for an hour; any replica can recall it by its handle"},
		func(c *engine.Call, in note) (ref, error) {
			h, err := store.Create(c, principal, []byte(in.Text), time.Hour)
			return ref{Handle: string(h)}, err // state.ErrUnavailable becomes -32603 with HTTP 503: retry
		})
	if err != nil {
		return err
	}
	err = engine.AddTool(srv, engine.Tool{Name: "recall", Description: "Returns the note a handle names"},
		func(c *engine.Call, in ref) (note, error) {
			rec, err := store.Get(c, principal, state.Handle(in.Handle))
			return note{Text: string(rec.Value)}, err // state.ErrNotFound: an isError result the model can read
		})
	if err != nil {
		return err
	}
	err = srv.AddTool(engine.Tool{
		Name:        "touch",
		Description: "Announces that the board changed, to the listeners of every replica",
		Handler: func(c *engine.Call) error {
			if err := srv.ResourceUpdated("note://board"); err != nil {
				return err
			}
			c.Text("announced")
			return nil
		},
	})
	if err != nil {
		return err
	}
	return srv.AddResource(engine.Resource{
		URI: "note://board", Name: "board",
		Handler: func(c *engine.Call, uri string, _ map[string]string) error {
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "the board"}}})
		},
	})
}
