package otelmcp_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// BenchmarkTracedEcho: one inline echo tools/call on an in-memory line
// connection, with tracing off (no hooks: what every server without
// otelmcp runs), with otelmcp on a no-op tracer provider (the cost of the
// hooks and the _meta lookup), and with the SDK recording every span
// (sampled, a traceparent in _meta).
func BenchmarkTracedEcho(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{` + meta + `,"traceparent":"` + traceparent + `"}}}`)
	for _, bc := range []struct {
		name  string
		hooks func() engine.Hooks
	}{
		{"off", func() engine.Hooks { return engine.Hooks{} }},
		{"noop-provider", func() engine.Hooks {
			return otelmcp.Hooks(otelmcp.Config{TracerProvider: noop.NewTracerProvider()})
		}},
		{"sdk-recording", func() engine.Hooks {
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			return otelmcp.Hooks(otelmcp.Config{TracerProvider: tp})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := engine.New(engine.Config{Hooks: bc.hooks()})
			defer func() { _ = srv.Shutdown(context.Background()) }()
			_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
				t, _ := c.ArgBytes("text")
				c.TextBytes(t)
				return nil
			}})
			n := 0
			m := linestream.NewMem(engine.NewScope(srv, ""), func([]byte) error { n++; return nil }, linestream.Config{}, nil)
			defer m.Close()
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Send(msg)
			}
			if n == 0 {
				b.Fatal("no reply")
			}
		})
	}
}
