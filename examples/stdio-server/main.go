// Command stdio-server is an MCP server a desktop host spawns: it speaks
// on stdin/stdout only, logs to stderr, and exits when its stdin closes.
// Its one tool counts the words, lines and characters of a text.
//
// Configure a host with the command, e.g. {"command": "/path/to/stdio-server"}.
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

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
	err := srv.AddTool(engine.Tool{
		Name:         "count",
		Description:  "Counts the words, lines and characters of a text",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the text to count"}},"required":["text"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"words":{"type":"integer"},"lines":{"type":"integer"},"chars":{"type":"integer"}},"required":["words","lines","chars"]}`),
		Handler: func(c *engine.Call) error {
			text, _ := c.ArgString("text") // the schema made sure it is a string
			out := counts{Words: len(strings.Fields(text)), Lines: strings.Count(text, "\n") + 1, Chars: utf8.RuneCountInString(text)}
			b, _ := json.Marshal(out)
			return c.Return(mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(string(b))}, StructuredContent: out})
		},
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
