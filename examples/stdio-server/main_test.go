package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
	stdioclient "github.com/mcpwire/mcpwire/client/stdio"
)

// TestStdioServer builds the program and spawns it the way a desktop host
// does: the tool is listed and called, and closing stdin ends it.
func TestStdioServer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stdio-server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := &stdioclient.Command{Path: bin}
	c := client.New(client.NewLineTransport(cmd.Dial, client.LineConfig{}), client.Config{})
	tools, err := c.ListTools(ctx)
	if err != nil || len(tools) != 1 || tools[0].Name != "count" || len(tools[0].OutputSchema) == 0 {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	res, err := c.CallTool(ctx, "count", map[string]string{"text": "two words\nand a line"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("count: %v %+v", err, res)
	}
	var got counts
	if err := res.DecodeStructured(&got); err != nil || got != (counts{Words: 5, Lines: 2, Chars: 20}) {
		t.Fatalf("structuredContent %+v (%v), text %q", got, err, res.Text())
	}
	res, err = c.CallTool(ctx, "count", map[string]int{"text": 7}, nil)
	if err != nil || !res.IsError || res.Text() != "Invalid arguments: arguments.text: expected string, got number" {
		t.Fatalf("a number for text: %v %+v (want an isError result the model can read)", err, res)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("the server did not exit when its stdin closed: %v", err)
	}
}
