// Command stdio-server is an MCP server a desktop host spawns: it speaks
// on stdin/stdout only, logs to stderr, and exits when its stdin closes.
// Its one tool counts the words, lines and characters of a text.
//
// Configure a host with the command, e.g. {"command": "/path/to/stdio-server"}.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// countIn is the tool's arguments; its input schema is inferred from it.
type countIn struct {
	Text string `json:"text" jsonschema:"the text to count"`
}

// counts is the tool's result, as structuredContent and as its JSON text.
type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Chars int `json:"chars"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := engine.New(engine.Config{Name: "wordcount", Version: "1.0.0"})
	err := engine.AddTool(srv, engine.Tool{Name: "count", Description: "Counts the words, lines and characters of a text"},
		func(c *engine.Call, in countIn) (counts, error) {
			return counts{Words: len(strings.Fields(in.Text)), Lines: strings.Count(in.Text, "\n") + 1, Chars: utf8.RuneCountInString(in.Text)}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// Serve returns nil when stdin ends; stray prints to stdout go to stderr.
	err = stdio.Serve(ctx, srv, stdio.Config{})
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err != nil {
		log.Fatal(err)
	}
}
