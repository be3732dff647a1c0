package streamhttp

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	mcpclient "github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
	httpserver "github.com/mcpwire/mcpwire/transport/streamhttp"
)

// BenchmarkDialRoundTrip: one tools/call through the client transport
// (Dial) against the in-process server (fasthttp front end, loopback
// TCP, one keep-alive connection): Open, Next until io.EOF, Close. The
// allocations are both sides'. "json": the echo tool, answered with one
// JSON body; "json/deadline": the same under a context with a deadline
// (the exchange watches it); "sse": the quick tool with a progressToken
// and one progress notification, answered with an event stream (which
// the server closes after it: a new connection per call).
// "ref/fasthttp.HostClient": the json call from fasthttp's client, the
// floor to compare with.
func BenchmarkDialRoundTrip(b *testing.B) {
	eng := engine.New(engine.Config{Name: "ExampleServer", Version: "1.0.0"})
	b.Cleanup(func() { _ = eng.Shutdown(context.Background()) })
	if err := eng.AddTool(fixture.Echo(true)); err != nil {
		b.Fatal(err)
	}
	if err := eng.AddTool(engine.Tool{Name: "quick", Inline: true, Handler: func(c *engine.Call) error {
		var a struct {
			Steps int `json:"steps"`
		}
		if err := c.Bind(&a); err != nil {
			return err
		}
		for i := 1; i <= a.Steps; i++ {
			c.Progress(float64(i), float64(a.Steps), "")
		}
		c.Text("quick done")
		return nil
	}}); err != nil {
		b.Fatal(err)
	}
	s := httpserver.New(eng, httpserver.Config{})
	ln, err := s.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
	})
	tr := dtDial(b, "http://"+ln.Addr().String()+"/mcp", Config{})
	for _, bc := range []struct {
		name     string
		out      *mcpclient.Outgoing
		deadline bool
		msgs     int
	}{
		{"json", dtCall(1, "echo", `{"text":"hi"}`, ""), false, 1},
		{"json/deadline", dtCall(1, "echo", `{"text":"hi"}`, ""), true, 1},
		{"sse", dtCall(1, "quick", `{"steps":1}`, "1"), false, 2},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if bc.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
				defer cancel()
			}
			call := func() {
				x, err := tr.Open(ctx, bc.out)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := x.Next(ctx)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				_ = x.Close()
				if n != bc.msgs {
					b.Fatalf("%d messages, want %d", n, bc.msgs)
				}
			}
			for range 100 {
				call()
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.out.Body)))
			b.ResetTimer()
			for b.Loop() {
				call()
			}
		})
	}
	// The floor: the same echo call from fasthttp's own keep-alive client.
	b.Run("ref/fasthttp.HostClient", func(b *testing.B) {
		hc := &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 1}
		req := fasthttp.AcquireRequest()
		defer fasthttp.ReleaseRequest(req)
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://" + ln.Addr().String() + "/mcp")
		req.Header.SetContentType("application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		req.SetBody(dtCall(1, "echo", `{"text":"hi"}`, "").Body)
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseResponse(resp)
		call := func() {
			if err := hc.Do(req, resp); err != nil || resp.StatusCode() != 200 {
				b.Fatalf("%v %d %s", err, resp.StatusCode(), resp.Body())
			}
		}
		for range 100 {
			call()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			call()
		}
	})
}
