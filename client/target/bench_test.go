package target_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// BenchmarkClientCall: one tools/call echo {"text":"hello world"} through
// Client.CallTool against the reference server, one call at a time, the
// result checked. "tcp": the socket server in this process over loopback
// TCP; "http": the Streamable HTTP server (fasthttp front end) in this
// process; "stdio": this test binary re-run as a stdio server (a child
// process). The allocations counted are this process's: for tcp and http
// the server's too (one to three per call), for stdio the client's alone. bench/cmd/clientrt (make compare-clients)
// measures the client on its own, next to the go-sdk and mcp-go clients.
func BenchmarkClientCall(b *testing.B) {
	args := map[string]string{"text": "hello world"}
	for _, bc := range []struct {
		name  string
		start func(b *testing.B) string
	}{
		{"tcp", benchSocket},
		{"http", benchHTTP},
		{"stdio", func(b *testing.B) string {
			b.Setenv(childEnv, "plain")
			return "stdio:'" + os.Args[0] + "'"
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := target.Open(bc.start(b), target.Config{Logger: quiet(), StopWait: 2 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if _, err := c.Probe(ctx); err != nil {
				b.Fatal(err)
			}
			if c.Era() != client.EraModern {
				b.Fatalf("era %s, want modern", c.Era())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := c.CallTool(ctx, "echo", args, nil)
				if err != nil {
					b.Fatal(err)
				}
				if res.IsError || res.Text() != "hello world" {
					b.Fatalf("echo result %+v", res)
				}
			}
		})
	}
}

// benchSocket starts the reference server on loopback TCP (startSocket
// takes a *testing.T).
func benchSocket(b *testing.B) string {
	srv := newRef(b)
	s := socket.New(srv, socket.Config{})
	if err := s.Listen("tcp", "127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	})
	return "tcp://" + s.Addrs()[0].String()
}

// benchHTTP starts the reference server's Streamable HTTP endpoint on
// loopback with the fasthttp front end, as `mcpwire serve --http` does.
func benchHTTP(b *testing.B) string {
	srv := newRef(b)
	hs := streamhttp.New(srv, streamhttp.Config{})
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String() + "/mcp"
}
