package stream

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func start(t *testing.T, network, addr string, opt Options) (*engine.Server, *Server, net.Addr) {
	t.Helper()
	base := goleak.IgnoreCurrent()
	eng := engine.New(engine.Options{})
	_ = eng.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	_ = eng.AddResource(engine.Resource{URI: "test://r", Name: "r", Handler: func(c *engine.Call, uri string, _ map[string]string) error {
		return engine.ErrResourceNotFound(uri)
	}})
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	s := New(eng, opt)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
		goleak.VerifyNone(t, base)
	})
	return eng, s, ln.Addr()
}

type client struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, a net.Addr) *client {
	c, err := net.Dial(a.Network(), a.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, r: bufio.NewReader(c)}
}

func (c *client) send(t *testing.T, line string) {
	if _, err := fmt.Fprintf(c.c, "%s\n", line); err != nil {
		t.Fatal(err)
	}
}

func (c *client) line(t *testing.T) string {
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	l, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v (got %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

func TestTCPAndUnix(t *testing.T) { // CUST-04: the stdio framing and rules over sockets
	for _, nw := range []struct{ network, addr string }{
		{"tcp", "127.0.0.1:0"},
		{"unix", filepath.Join(t.TempDir(), "mcp.sock")},
	} {
		t.Run(nw.network, func(t *testing.T) {
			_, _, a := start(t, nw.network, nw.addr, Options{})
			c := dial(t, a)
			c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over `+nw.network+`"},`+meta+`}}`)
			if l := c.line(t); !strings.Contains(l, `"id":1`) || !strings.Contains(l, "over "+nw.network) {
				t.Fatalf("echo: %s", l)
			}
			c.send(t, `not json`)
			if l := c.line(t); !strings.Contains(l, "-32700") {
				t.Fatalf("parse error: %s", l)
			}
		})
	}
}

func TestListenCompletesOnShutdown(t *testing.T) { // SUB-10 over a socket
	eng, s, a := start(t, "tcp", "127.0.0.1:0", Options{})
	c := dial(t, a)
	c.send(t, `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://r"]},`+meta+`}}`)
	if l := c.line(t); !strings.Contains(l, "acknowledged") {
		t.Fatalf("ack: %s", l)
	}
	for eng.Stats().ListenStreams.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	eng.ResourceUpdated("test://r")
	if l := c.line(t); !strings.Contains(l, `/subscriptionId":"L"},"uri":"test://r"`) {
		t.Fatalf("update: %s", l)
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}()
	if l := c.line(t); !strings.Contains(l, `"id":"L","result":{"resultType":"complete"`) {
		t.Fatalf("final: %s", l)
	}
}

func TestOverlongLineClosesConnection(t *testing.T) { // A1 on sockets
	_, _, a := start(t, "tcp", "127.0.0.1:0", Options{MaxLine: 1024})
	c := dial(t, a)
	c.send(t, strings.Repeat("x", 4096))
	if l := c.line(t); !strings.Contains(l, "-32600") || strings.Contains(l, `"id"`) {
		t.Fatalf("too large: %s", l)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.r.ReadString('\n'); err == nil {
		t.Fatal("connection still open after an over-long message")
	}
}
