package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/observe/otelmcp"
)

// TestExample runs the program on loopback and uses it as a user would:
// the service's own route, a tool call from our client whose span becomes
// the server span's parent, a call with a missing argument refused before
// the handler, the call counted in /metrics, and a clean shutdown.
func TestExample(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	ctx, stop := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", tp, func(a string) { addrc <- a }) }()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}

	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/hello"); !strings.Contains(got, "own route") {
		t.Fatalf("/hello: %q", got)
	}

	tr, err := streamhttp.Dial(base+"/mcp", streamhttp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(tr, client.Config{Propagate: otelmcp.Propagate(propagation.TraceContext{})})
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The caller's span: the server's span must become its child.
	cctx, span := tp.Tracer("test").Start(cctx, "caller")
	res, err := c.CallTool(cctx, "greet", map[string]string{"name": "Ada"}, nil)
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "Hello, Ada!" {
		t.Fatalf("greet: %q", res.Text())
	}
	// Arguments the schema refuses are the tool's error, which the model
	// reads and corrects (SEP-1303), not a JSON-RPC error.
	res, err = c.CallTool(cctx, "greet", map[string]string{}, nil)
	if err != nil || !res.IsError || res.Text() != "Invalid arguments: arguments.name: required" {
		t.Fatalf("greet without a name: %v %+v", err, res)
	}
	_ = c.Close()

	m := get("/metrics")
	if !strings.Contains(m, `mcpwire_request_duration_seconds_count{method="tools/call",transport="http"} 2`) {
		t.Errorf("/metrics has no count of the two tools/call requests:\n%s", grepLines(m, "mcpwire_request_duration_seconds_count"))
	}

	var server sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		if s.Name() == "tools/call greet" && s.Parent().SpanID() == span.SpanContext().SpanID() {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no server span for greet under the caller's span (%d spans)", len(sr.Ended()))
	}
	if server.SpanContext().TraceID() != span.SpanContext().TraceID() {
		t.Errorf("server span in trace %v, caller in %v", server.SpanContext().TraceID(), span.SpanContext().TraceID())
	}

	stop()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
