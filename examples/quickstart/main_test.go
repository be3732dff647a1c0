package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
	stdioclient "github.com/mcpwire/mcpwire/client/stdio"
	httpclient "github.com/mcpwire/mcpwire/client/streamhttp"
)

// TestQuickstart builds the program and uses it as the README says: over
// stdio (a spawned process) and over HTTP at the address it logs, a tool,
// a tool with progress, the resource and the prompt; closing stdin ends the
// process without a signal.
func TestQuickstart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "quickstart")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	urls := make(chan string, 1)
	reURL := regexp.MustCompile(`http://\S+/mcp`)
	cmd := &stdioclient.Command{Path: bin, Args: []string{"-http", "127.0.0.1:0"}, Stderr: func(line string) {
		if u := reURL.FindString(line); u != "" {
			select {
			case urls <- u:
			default:
			}
		}
	}}
	c := client.New(client.NewLineTransport(cmd.Dial, client.LineConfig{}), client.Config{})

	res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Ada"}, nil)
	var out struct {
		Greeting string `json:"greeting"`
	}
	if err != nil || res.IsError || res.DecodeStructured(&out) != nil || out.Greeting != "Hello, Ada!" {
		t.Fatalf("greet over stdio: %v %+v", err, res)
	}
	res, err = c.CallTool(ctx, "greet", map[string]string{"name": "Ada", "tone": "loud"}, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "arguments.tone") {
		t.Fatalf("a tone outside the enum: %v %+v (want an isError result naming arguments.tone)", err, res)
	}
	steps := 0
	res, err = c.CallTool(ctx, "count", nil, &client.CallOptions{OnProgress: func(client.Progress) { steps++ }})
	if err != nil || res.Text() != "counted to 5" || steps == 0 {
		t.Fatalf("count: %v %+v, %d progress notifications", err, res, steps)
	}
	contents, err := c.ReadResource(ctx, "note://today")
	if err != nil || len(contents) != 1 || contents[0].Text != "Ship it." {
		t.Fatalf("resource: %v %+v", err, contents)
	}
	msgs, err := c.GetPrompt(ctx, "review", map[string]string{"topic": "the README"})
	if err != nil || len(msgs) != 1 || msgs[0].Content.Text != "Review the README briefly." {
		t.Fatalf("prompt: %v %+v", err, msgs)
	}

	var url string
	select {
	case url = <-urls:
	case <-ctx.Done():
		t.Fatal("the program did not log its HTTP address")
	}
	tr, err := httpclient.Dial(url, httpclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	hc := client.New(tr, client.Config{})
	res, err = hc.CallTool(ctx, "greet", map[string]string{"name": "Grace", "tone": "dry"}, nil)
	if err != nil || res.Text() != `{"greeting":"Hello, Grace."}` {
		t.Fatalf("greet over HTTP: %v %+v", err, res)
	}
	_ = hc.Close()

	if err := c.Close(); err != nil { // stdin closes: the program shuts down and exits by itself
		t.Fatalf("the program did not exit on its own when stdin closed: %v", err)
	}
}
