// Package otelmcp traces an mcpwire server with OpenTelemetry, on the
// engine's hooks: the core engine does not depend on OpenTelemetry, and a
// server that does not install these hooks pays nothing for them.
//
//	srv := engine.New(engine.Config{
//		Hooks: otelmcp.Hooks(otelmcp.Config{TracerProvider: tp}),
//	})
//
// # Spans
//
// Every request gets a server span, started when it reaches validation and
// ended when it ends (a listen stream: when the stream closes), named
// "{method} {tool or prompt name}" ("tools/call echo", "resources/read",
// "subscriptions/listen") with these attributes:
//
//   - mcp.method.name, jsonrpc.request.id, mcp.protocol.version;
//   - gen_ai.tool.name (tools/call), gen_ai.prompt.name (prompts/get),
//     mcp.resource.uri (resources/read);
//   - mcp.transport ("stdio", "tcp", "unix", "http"), network.transport
//     ("pipe", "tcp", "unix"), network.protocol.name ("http") and
//     client.address when the transport reports connections;
//   - mcp.mrtr.retry: true on an MRTR round that carries requestState or
//     inputResponses: each round is a request of its own, so each round is
//     a span of its own, a child of the same client span;
//   - at the end: mcp.result.type ("complete", "input_required"),
//     mcp.end.reason (ok, error, cancelled, disconnect, shutdown, timeout),
//     rpc.jsonrpc.error_code and error.type for a JSON-RPC error,
//     error.type "tool_error" for a tool result with isError; the span's
//     status is Error for these and for a timeout.
//
// A subscriptions/listen stream gets a child span, "subscriptions/listen
// stream", from the moment it opens to its end.
//
// The span is the handler's: trace.SpanFromContext(c) (c is the
// *engine.Call) returns it, so that a handler's own spans are its
// children.
//
// # Parent
//
// The W3C trace context (traceparent, tracestate, and baggage) is read
// from the request's params._meta, where MCP carries it on every transport
// (META-01); when _meta has no traceparent, from the HTTP request headers
// (Streamable HTTP), unless Config.NoHeaders. The _meta value wins when
// both are present: it is what the MCP client itself sent, end to end,
// while a header may belong to a hop in between (a gateway or a proxy that
// traces its own request). When neither has one, the parent is whatever
// span the transport's context carries (an instrumented net/http handler
// mounting the streamhttp adapter), else the span is a root.
//
// On the client side, client.Config.Propagate = otelmcp.Propagate(nil)
// writes the caller's span context into every request's _meta.
package otelmcp

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/mcpwire/mcpwire/observe/otelmcp"

// Config configures the tracing hooks. The zero value uses the global
// tracer provider and W3C trace context plus baggage.
type Config struct {
	// TracerProvider makes the tracer. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator reads the parent from _meta (or headers). Default W3C
	// trace context and baggage.
	Propagator propagation.TextMapPropagator
	// NoHeaders ignores HTTP headers: the parent is read from _meta only.
	NoHeaders bool
}

// DefaultPropagator is W3C trace context and baggage.
func DefaultPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

type callSpanKey struct{}

// Hooks returns engine hooks that trace every request (and listen
// stream) as described in the package documentation. Join them with
// other hooks with engine.JoinHooks.
func Hooks(cfg Config) engine.Hooks {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = DefaultPropagator()
	}
	t := &tracer{tr: tp.Tracer(ScopeName), prop: prop, headers: !cfg.NoHeaders}
	return engine.Hooks{
		CallStart:   t.callStart,
		CallEnd:     t.callEnd,
		ListenStart: t.listenStart,
		ListenEnd:   t.listenEnd,
	}
}

type tracer struct {
	tr      trace.Tracer
	prop    propagation.TextMapPropagator
	headers bool
}

func (t *tracer) callStart(c *engine.Call) {
	ctx := c.ValueContext()
	if _, ok := codec.LookupString(c.Meta(), "traceparent"); ok {
		ctx = t.prop.Extract(ctx, metaCarrier{c})
	} else if t.headers {
		if _, ok := c.HeaderBytes("traceparent"); ok {
			ctx = t.prop.Extract(ctx, headerCarrier{c})
		}
	}
	method := c.Method()
	name := method
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs,
		attribute.String("mcp.method.name", method),
		attribute.String("jsonrpc.request.id", string(c.ID())),
	)
	if v := c.ProtocolVersion(); v != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", v))
	}
	switch method {
	case "tools/call":
		n := c.Name()
		name += " " + n
		attrs = append(attrs, attribute.String("gen_ai.tool.name", n))
	case "prompts/get":
		n := c.Name()
		name += " " + n
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", n))
	case "resources/read":
		attrs = append(attrs, attribute.String("mcp.resource.uri", c.URI()))
	}
	if tr := c.Transport(); tr != "" {
		attrs = append(attrs, attribute.String("mcp.transport", tr))
		switch tr {
		case "stdio":
			attrs = append(attrs, attribute.String("network.transport", "pipe"))
		case "tcp", "unix":
			attrs = append(attrs, attribute.String("network.transport", tr))
		case "http":
			attrs = append(attrs, attribute.String("network.transport", "tcp"), attribute.String("network.protocol.name", "http"))
		}
	}
	if ci := c.Conn(); ci != nil && ci.RemoteAddr != "" {
		attrs = append(attrs, attribute.String("client.address", ci.RemoteAddr))
	}
	if isRetry(c) {
		attrs = append(attrs, attribute.Bool("mcp.mrtr.retry", true))
	}
	ctx, span := t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	c.SetValues(context.WithValue(ctx, callSpanKey{}, span))
}

func isRetry(c *engine.Call) bool {
	if _, ok := c.ParamRaw("requestState"); ok {
		return true
	}
	_, ok := c.ParamRaw("inputResponses")
	return ok
}

func (t *tracer) callEnd(c *engine.Call, o engine.Outcome) {
	span, _ := c.Value(callSpanKey{}).(trace.Span)
	if span == nil {
		return
	}
	finish(span, o)
}

// finish records the outcome on span and ends it.
func finish(span trace.Span, o engine.Outcome) {
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, attribute.String("mcp.end.reason", o.Reason.String()))
	if o.ResultType != "" {
		attrs = append(attrs, attribute.String("mcp.result.type", o.ResultType))
	}
	switch o.Reason {
	case engine.EndError, engine.EndTimeout:
		code := strconv.Itoa(int(o.Code))
		attrs = append(attrs, attribute.Int("rpc.jsonrpc.error_code", int(o.Code)), attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	case engine.EndOK:
		if o.ToolError {
			attrs = append(attrs, attribute.String("error.type", "tool_error"))
			span.SetStatus(codes.Error, "tool_error")
		}
	default:
		attrs = append(attrs, attribute.String("error.type", o.Reason.String()))
		if o.Cause != nil {
			attrs = append(attrs, attribute.String("mcp.end.cause", o.Cause.Error()))
		}
	}
	span.SetAttributes(attrs...)
	span.End()
}

func (t *tracer) listenStart(c *engine.Call) {
	ctx := c.ValueContext()
	ctx, _ = t.tr.Start(ctx, "subscriptions/listen stream", trace.WithSpanKind(trace.SpanKindInternal))
	c.SetValues(ctx) // the call span stays under callSpanKey
}

func (t *tracer) listenEnd(c *engine.Call, o engine.Outcome) {
	span := trace.SpanFromContext(c)
	if call, _ := c.Value(callSpanKey{}).(trace.Span); call == span || !span.SpanContext().IsValid() {
		return // no stream span of our own
	}
	finish(span, o)
}

// metaCarrier reads the propagation keys from the request's _meta.
type metaCarrier struct{ c *engine.Call }

func (m metaCarrier) Get(key string) string {
	if s, ok := codec.LookupString(m.c.Meta(), key); ok {
		return s.String()
	}
	return ""
}
func (m metaCarrier) Set(string, string) {}
func (m metaCarrier) Keys() []string     { return []string{"traceparent", "tracestate", "baggage"} }

// headerCarrier reads them from the HTTP request headers.
type headerCarrier struct{ c *engine.Call }

func (h headerCarrier) Get(key string) string { return h.c.Header(key) }
func (h headerCarrier) Set(string, string)    {}
func (h headerCarrier) Keys() []string        { return []string{"traceparent", "tracestate", "baggage"} }

// Propagate returns a client.Config.Propagate function that writes the
// trace context of each request's context into its _meta (traceparent,
// tracestate, baggage) with p (nil: DefaultPropagator).
func Propagate(p propagation.TextMapPropagator) func(ctx context.Context, set func(key, value string)) {
	if p == nil {
		p = DefaultPropagator()
	}
	return func(ctx context.Context, set func(key, value string)) {
		p.Inject(ctx, setCarrier(set))
	}
}

// setCarrier adapts the client's setter to a propagation carrier.
type setCarrier func(key, value string)

func (s setCarrier) Get(string) string     { return "" }
func (s setCarrier) Set(key, value string) { s(key, value) }
func (s setCarrier) Keys() []string        { return nil }
