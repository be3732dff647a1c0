package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestToolTimeout(t *testing.T) { // TMO-01..03
	leakCheck(t)
	s := engine.New(engine.Config{ProgressInterval: -1})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	ctxErr := make(chan error, 2)
	_ = s.AddTool(engine.Tool{Name: "deaf", Timeout: 50 * time.Millisecond, Handler: func(c *engine.Call) error {
		time.Sleep(300 * time.Millisecond) // ignores its context
		ctxErr <- c.Err()
		c.Text("too late")
		return nil
	}})
	_ = s.AddTool(engine.Tool{Name: "chatty", Timeout: 60 * time.Millisecond, MaxTimeout: 250 * time.Millisecond, Handler: func(c *engine.Call) error {
		for i := 1; ; i++ {
			c.Progress(float64(i), 0, "")
			select {
			case <-c.Done():
				return c.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}})
	out := newSink()
	sc := newStreamConn(s, out)
	defer sc.Close()
	t0 := time.Now()
	feed(t, sc, req(1, "tools/call", `"name":"deaf","arguments":{}`))
	m := out.response(t, "1")
	if m.code() != -32603 || m.Error.Message != "Request timed out" {
		t.Fatalf("timeout answer: %s", m.raw)
	}
	if d := time.Since(t0); d > 250*time.Millisecond {
		t.Fatalf("answered after %v: the timeout must not wait for the handler", d)
	}
	if err := <-ctxErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("handler context error %v", err)
	}
	waitFor(t, "deaf to end", func() bool { return sc.InFlight() == 0 })

	// Progress restarts the timeout, but not past MaxTimeout.
	t0 = time.Now()
	line := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}`
	feed(t, sc, line)
	m = out.response(t, "2")
	d := time.Since(t0)
	if m.code() != -32603 || d < 200*time.Millisecond || d > 2*time.Second {
		t.Fatalf("chatty ended after %v with %s", d, m.raw)
	}
	for _, f := range out.all() {
		if strings.Contains(f, "too late") {
			t.Fatal("result written after the timeout")
		}
	}
	waitFor(t, "chatty to end", func() bool { return sc.InFlight() == 0 })
	if s.Stats().TimedOut.Load() != 2 {
		t.Fatalf("TimedOut = %d", s.Stats().TimedOut.Load())
	}
}
