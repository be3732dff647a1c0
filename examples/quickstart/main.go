// Command quickstart is the README's quick start: one engine with a tool, a
// tool that reports progress, a resource and a prompt, served on
// stdin/stdout and on Streamable HTTP at once.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

func main() {
	addr := flag.String("http", "127.0.0.1:8080", "Streamable HTTP address (loopback)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string) error {
	srv := engine.New(engine.Config{Name: "quickstart", Version: "1.0.0"})

	// A typed tool: the input and output schemas come from the Go types,
	// arguments are checked and decoded before the handler runs, and the
	// result goes out as structuredContent plus its JSON as text.
	type greetIn struct {
		Name string `json:"name" jsonschema:"who to greet"`
		Tone string `json:"tone,omitempty" enum:"warm,dry"`
	}
	type greetOut struct {
		Greeting string `json:"greeting"`
	}
	err := engine.AddTool(srv, engine.Tool{Name: "greet", Description: "Greets someone"},
		func(c *engine.Call, in greetIn) (greetOut, error) {
			if in.Tone == "dry" {
				return greetOut{Greeting: "Hello, " + in.Name + "."}, nil
			}
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		return err
	}

	// A tool that reports progress and stops when the client cancels.
	err = srv.AddTool(engine.Tool{
		Name: "count",
		Handler: func(c *engine.Call) error {
			for i := 1; i <= 5; i++ {
				select {
				case <-c.Done(): // cancelled, disconnected or shut down
					return c.Err()
				case <-time.After(100 * time.Millisecond):
				}
				c.Progress(float64(i), 5, fmt.Sprintf("step %d", i)) // sent only if the client asked
			}
			c.Text("counted to 5")
			return nil
		},
	})
	if err != nil {
		return err
	}

	// A resource.
	err = srv.AddResource(engine.Resource{
		URI: "note://today", Name: "today", MimeType: "text/plain",
		Handler: func(c *engine.Call, uri string, _ map[string]string) error {
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, MimeType: "text/plain", Text: "Ship it."}}})
		},
	})
	if err != nil {
		return err
	}

	// A typed prompt: its arguments come from the struct's fields.
	type reviewIn struct {
		Topic string `json:"topic" jsonschema:"what to review"`
	}
	err = engine.AddPrompt(srv, engine.Prompt{Name: "review"},
		func(c *engine.Call, in reviewIn) (mcp.PromptResult, error) {
			return mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("Review " + in.Topic + " briefly.")},
			}}, nil
		})
	if err != nil {
		return err
	}

	// Two transports on one engine: HTTP in the background, stdio until
	// stdin ends or a signal comes.
	hs := streamhttp.New(srv, streamhttp.Config{})
	ln, err := hs.Listen(addr)
	if err != nil {
		return err
	}
	go func() { _ = hs.Serve(ln) }()
	log.Printf("quickstart: http://%s/mcp and stdin/stdout", ln.Addr()) // logs go to stderr
	err = stdio.Serve(ctx, srv, stdio.Config{})

	// Shut down in order: the transports, then the engine, once.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	_ = srv.Shutdown(sctx)
	return err
}
