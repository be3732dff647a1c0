package otelmcp_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/client"
	httpclient "github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
	"github.com/mcpwire/mcpwire/transport/linestream"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

const (
	meta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	// A W3C traceparent (version 00, sampled) and its ids.
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + parentTrace + "-" + parentSpan + "-01"
)

func setup(t *testing.T) (*tracetest.SpanRecorder, *sdktrace.TracerProvider, *engine.Server) {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	srv := engine.New(engine.Config{Name: "traced", Version: "1", Hooks: otelmcp.Hooks(otelmcp.Config{TracerProvider: tp})})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(srv.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		// The handler's context carries the server span.
		sc := trace.SpanFromContext(c).SpanContext()
		c.Text(sc.TraceID().String() + "/" + sc.SpanID().String())
		return nil
	}}))
	must(srv.AddTool(engine.Tool{Name: "fails", Handler: func(c *engine.Call) error { return errors.New("no") }}))
	must(srv.AddTool(engine.Tool{Name: "ask", Handler: func(c *engine.Call) error {
		if _, ok := c.ParamRaw("requestState"); ok {
			c.Text("done")
			return nil
		}
		return c.InputRequired(mcp.InputRequired{RequestState: "round-1"})
	}}))
	return sr, tp, srv
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// waitSpans waits until n spans have ended.
func waitSpans(t *testing.T, sr *tracetest.SpanRecorder, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if e := sr.Ended(); len(e) >= n {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans ended, want %d", len(sr.Ended()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func byName(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

type memPeer struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func (p *memPeer) deliver(b []byte) error {
	p.mu.Lock()
	p.got = append(p.got, string(b))
	p.mu.Unlock()
	select {
	case p.ch <- struct{}{}:
	default:
	}
	return nil
}

func (p *memPeer) wait(t *testing.T, sub string) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		p.mu.Lock()
		for _, s := range p.got {
			if strings.Contains(s, sub) {
				p.mu.Unlock()
				return s
			}
		}
		p.mu.Unlock()
		select {
		case <-p.ch:
		case <-deadline:
			t.Fatalf("no frame with %q in %q", sub, p.got)
		}
	}
}

// TestSpansFromMeta: on a line connection (stdio and sockets share it) the
// parent comes from _meta traceparent; each span carries the method, the
// tool, the result type or error code, and listen streams get a child.
func TestSpansFromMeta(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sr, _, srv := setup(t)
	p := &memPeer{ch: make(chan struct{}, 1)}
	sc := engine.NewScope(srv, "stdio")
	m := linestream.NewMem(sc, p.deliver, linestream.Config{}, nil)
	send := func(s string) {
		if err := m.Send([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{` + meta + `,"traceparent":"` + traceparent + `","tracestate":"vendor=x"}}}`)
	reply := p.wait(t, `"id":1`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"missing","_meta":{` + meta + `}}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fails","_meta":{` + meta + `}}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","_meta":{` + meta + `}}}`)
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","requestState":"round-1","_meta":{` + meta + `}}}`)
	send(`{"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{` + meta + `}}}`)
	for _, id := range []string{`"id":2`, `"id":3`, `"id":4`, `"id":5`, "acknowledged"} {
		p.wait(t, id)
	}
	m.Close() // ends the listen stream (a disconnect)
	spans := waitSpans(t, sr, 7)
	_ = srv.Shutdown(context.Background())

	echo := byName(spans, "tools/call echo")
	if echo == nil {
		t.Fatalf("no echo span in %d spans", len(spans))
	}
	if got := echo.Parent(); got.TraceID().String() != parentTrace || got.SpanID().String() != parentSpan || !got.IsRemote() {
		t.Errorf("parent %v, want the _meta traceparent", got)
	}
	if echo.SpanKind() != trace.SpanKindServer || echo.SpanContext().TraceState().Get("vendor") != "x" {
		t.Errorf("kind %v tracestate %q", echo.SpanKind(), echo.SpanContext().TraceState().String())
	}
	if want := parentTrace + "/" + echo.SpanContext().SpanID().String(); !strings.Contains(reply, want) {
		t.Errorf("the handler saw another span: %s, want %s", reply, want)
	}
	a := attrs(echo)
	for k, want := range map[attribute.Key]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcp.transport": "stdio",
		"network.transport": "pipe", "mcp.result.type": "complete", "mcp.end.reason": "ok",
		"jsonrpc.request.id": "1", "mcp.protocol.version": "2026-07-28",
	} {
		if a[k].AsString() != want {
			t.Errorf("echo %s = %q, want %q", k, a[k].AsString(), want)
		}
	}

	missing := byName(spans, "tools/call missing")
	if missing == nil || attrs(missing)["rpc.jsonrpc.error_code"].AsInt64() != -32602 || missing.Status().Code != codes.Error {
		t.Errorf("unknown tool span: %v", missing)
	} else if missing.Parent().IsValid() {
		t.Errorf("a request without traceparent has a parent: %v", missing.Parent())
	}
	if f := byName(spans, "tools/call fails"); f == nil || attrs(f)["error.type"].AsString() != "tool_error" {
		t.Errorf("tool error span: %v", f)
	}
	var rounds []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "tools/call ask" {
			rounds = append(rounds, s)
		}
	}
	if len(rounds) != 2 {
		t.Fatalf("%d MRTR round spans, want 2", len(rounds))
	}
	for _, r := range rounds {
		a := attrs(r)
		retry := a["mcp.mrtr.retry"].AsBool()
		want := "input_required"
		if retry {
			want = "complete"
		}
		if a["mcp.result.type"].AsString() != want {
			t.Errorf("round retry=%v: result type %q", retry, a["mcp.result.type"].AsString())
		}
	}
	listen := byName(spans, "subscriptions/listen")
	stream := byName(spans, "subscriptions/listen stream")
	if listen == nil || stream == nil {
		t.Fatalf("listen spans missing")
	}
	if stream.Parent().SpanID() != listen.SpanContext().SpanID() {
		t.Errorf("the stream span is not the listen span's child")
	}
	if attrs(listen)["mcp.end.reason"].AsString() != "disconnect" || attrs(stream)["mcp.end.reason"].AsString() != "disconnect" {
		t.Errorf("listen end reasons %v / %v", attrs(listen)["mcp.end.reason"], attrs(stream)["mcp.end.reason"])
	}
}

// TestEndToEndHTTP: our client writes its span context into _meta
// (client.Config.Propagate), and the server span over Streamable HTTP is
// its child. A traceparent header is used when _meta has none, and _meta
// wins when both are sent.
func TestEndToEndHTTP(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		// fasthttp's worker-pool cleaner and Date refresher outlive
		// Shutdown by design (see streamhttp's leakCheck).
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
	sr, tp, srv := setup(t)
	hs := streamhttp.New(srv, streamhttp.Config{})
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()
	url := "http://" + ln.Addr().String() + "/mcp"
	tr, err := httpclient.Dial(url, httpclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(tr, client.Config{Propagate: otelmcp.Propagate(nil)})
	ctx, clientSpan := tp.Tracer("test").Start(context.Background(), "client call", trace.WithSpanKind(trace.SpanKindClient))
	res, err := c.CallTool(ctx, "echo", map[string]string{}, nil)
	clientSpan.End()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	spans := waitSpans(t, sr, 2)
	var server sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "tools/call echo" {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no server span among %d", len(spans))
	}
	want := clientSpan.SpanContext()
	if server.Parent().SpanID() != want.SpanID() || server.SpanContext().TraceID() != want.TraceID() {
		t.Errorf("server span parent %v, want the client span %v", server.Parent(), want)
	}
	if len(res.Content) != 1 || res.Content[0].Text != want.TraceID().String()+"/"+server.SpanContext().SpanID().String() {
		t.Errorf("handler saw %+v", res.Content)
	}
	a := attrs(server)
	if a["mcp.transport"].AsString() != "http" || a["network.protocol.name"].AsString() != "http" {
		t.Errorf("transport attributes %v", a)
	}

	// The header, without _meta; then both: _meta wins.
	headerParent := "00-11111111111111111111111111111111-2222222222222222-01"
	post := func(id, metaExtra string) {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","_meta":{` + meta + metaExtra + `}}}`
		req, _ := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
		req.Header.Set("traceparent", headerParent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	post("10", "")
	post("11", `,"traceparent":"`+traceparent+`"`)
	http.DefaultClient.CloseIdleConnections()
	spans = waitSpans(t, sr, 4)
	for _, s := range spans {
		switch attrs(s)["jsonrpc.request.id"].AsString() {
		case "10":
			if s.Parent().TraceID().String() != "11111111111111111111111111111111" {
				t.Errorf("header parent not used: %v", s.Parent())
			}
		case "11":
			if s.Parent().TraceID().String() != parentTrace {
				t.Errorf("_meta did not win over the header: %v", s.Parent())
			}
		}
	}
}
