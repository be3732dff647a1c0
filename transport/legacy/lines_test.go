package legacy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// stdioConn runs stdio.ServeConn over pipes, with the legacy Upgrade hook
// when withLegacy; it returns the client's ends.
type stdioConn struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startStdio(t *testing.T, withLegacy bool) *stdioConn {
	t.Helper()
	eng := newEngine(t)
	leg := legacy.New(eng, legacy.Config{})
	var opt stdio.Config
	if withLegacy {
		opt.Upgrade = leg.StdioUpgrade
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioConn{in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		c.done <- stdio.ServeConn(context.Background(), eng, inR, outW, opt)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		select {
		case err := <-c.done:
			if err != nil {
				t.Errorf("ServeConn: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ServeConn did not return after stdin closed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = leg.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
	})
	return c
}

func (c *stdioConn) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *stdioConn) recv(t *testing.T) map[string]any {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := c.out.ReadString('\n')
		ch <- l
	}()
	select {
	case l := <-ch:
		return decode(t, l)
	case <-time.After(5 * time.Second):
		t.Fatal("no line within 5 s")
	}
	return nil
}

// With the option, an initialize as the first message switches the
// connection to 2025-11-25: session methods, engine tools, change
// notifications and server→client requests over the same pipe.
func TestStdioLegacyMode(t *testing.T) {
	leakCheck(t)
	c := startStdio(t, true)
	c.send(t, initBody)
	res, _ := c.recv(t)["result"].(map[string]any)
	if res["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %v", res)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := c.recv(t); m["result"] == nil {
		t.Fatalf("ping: %v", m)
	}
	c.send(t, call(3, "echo", `{"text":"piped"}`))
	if got := textOf(t, c.recv(t)); got != "piped" {
		t.Fatalf("echo: %q", got)
	}
	c.send(t, call(5, "echo", `{"text":["x"]}`))
	if m := c.recv(t); textOf(t, m) != "Invalid arguments: arguments.text: expected string, got array" || m["result"].(map[string]any)["isError"] != true {
		t.Fatalf("schema failure (SEP-1303): %v", m)
	}
	c.send(t, call(4, "ask_name", `{}`))
	ask := c.recv(t)
	if ask["method"] != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %v", ask)
	}
	id, _ := json.Marshal(ask["id"])
	c.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"action":"accept","content":{"name":"Lin"}}}`)
	if got := textOf(t, c.recv(t)); !strings.HasPrefix(got, "hello Lin") {
		t.Fatalf("after elicitation: %q", got)
	}
}

// Without the option, an initialize gets today's -32022 (COMPAT-09); with
// it, a connection that begins with a modern request stays modern.
func TestStdioWithoutLegacy(t *testing.T) {
	leakCheck(t)
	c := startStdio(t, false)
	c.send(t, initBody)
	e, _ := c.recv(t)["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32022) {
		t.Fatalf("initialize without the option: %v", e)
	}

	m := startStdio(t, true)
	m.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	res, _ := m.recv(t)["result"].(map[string]any)
	if res["resultType"] != "complete" {
		t.Fatalf("modern first message with the option: %v", res)
	}
	m.send(t, initBody) // not first: the engine's answer, no switch
	if e, _ := m.recv(t)["error"].(map[string]any); e == nil || e["code"] != float64(-32022) {
		t.Fatalf("initialize after a modern message: %v", e)
	}
}
