package metrics_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/common/expfmt"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/metrics"
)

// nop is a Replier that drops what it is given.
type nop struct{}

func (nop) Notify(*engine.Request, []byte) error     { return nil }
func (nop) Reply(*engine.Request, []byte, int) error { return nil }
func (nop) Done(*engine.Request)                     {}

// A Collector for an engine, registered with the Go and process
// collectors; one request through a scope labelled "stdio" shows in the
// duration histogram's count and in the engine's request counter.
func ExampleCollector() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		c.Text("hi")
		return nil
	}})
	reg := metrics.Registry(metrics.New(srv))

	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var env codec.Envelope
	_ = codec.Peek(msg, &env)
	r := engine.NewScope(srv, "stdio").Begin(context.Background(), msg, &env, nop{}, nil)
	if e := r.Check(); e == nil {
		r.Run()
	}

	mfs, _ := reg.Gather()
	var b strings.Builder
	for _, mf := range mfs {
		_ = expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain)).Encode(mf)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "mcpwire_request_duration_seconds_count") || strings.HasPrefix(line, "mcpwire_engine_requests_total") {
			fmt.Println(line)
		}
	}
	// Output:
	// mcpwire_engine_requests_total 1
	// mcpwire_request_duration_seconds_count{method="tools/call",transport="stdio"} 1
}
