package stdio

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestHooks: the stdio pair is one connection for the engine's hooks,
// its calls say "stdio", and ConnEnd runs when ServeConn returns.
func TestHooks(t *testing.T) {
	var mu sync.Mutex
	var events []string
	srv := engine.New(engine.Config{Hooks: engine.Hooks{
		ConnStart: func(ci *engine.ConnInfo) { mu.Lock(); events = append(events, "start "+ci.Transport); mu.Unlock() },
		ConnEnd: func(ci *engine.ConnInfo, err error) {
			mu.Lock()
			events = append(events, "end "+ci.Transport)
			mu.Unlock()
		},
		CallEnd: func(c *engine.Call, o engine.Outcome) {
			mu.Lock()
			events = append(events, "call "+c.Transport()+" "+o.Reason.String())
			mu.Unlock()
		},
	}})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error { c.Text("ok"); return nil }})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeConn(context.Background(), srv, inR, outW, Config{}); outW.Close() }()
	_, _ = io.WriteString(inW, req("1", "tools/call", `"name":"echo","arguments":{}`)+"\n")
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(line, `"text":"ok"`) {
		t.Fatalf("reply %q %v", line, err)
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(events, ","); got != "start stdio,call stdio ok,end stdio" {
		t.Errorf("events %q", got)
	}
}
