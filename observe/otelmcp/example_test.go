package otelmcp_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// Tracing a server: install the hooks with a tracer provider (here the
// SDK's in-memory recorder; in a deployment an OTLP exporter, for example
// go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp, behind
// sdktrace.WithBatcher). A request whose _meta carries a traceparent gets
// a server span that continues that trace.
func ExampleHooks() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	srv := engine.New(engine.Config{Hooks: otelmcp.Hooks(otelmcp.Config{TracerProvider: tp})})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		c.Text("hi")
		return nil
	}})
	conn := linestream.NewMem(engine.NewScope(srv, ""), func([]byte) error { return nil }, linestream.Config{}, nil)
	defer conn.Close()
	_ = conn.Send([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`))

	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.SpanKind(), "parent", s.Parent().TraceID(), s.Parent().SpanID())
		for _, kv := range s.Attributes() {
			if kv.Key == "mcp.result.type" || kv.Key == "gen_ai.tool.name" {
				fmt.Println(" ", kv.Key, kv.Value.String())
			}
		}
	}
	// Output:
	// tools/call echo server parent 4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7
	//   gen_ai.tool.name echo
	//   mcp.result.type complete
}
