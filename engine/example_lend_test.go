package engine_test

import (
	"context"
	"fmt"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// tenantHeaders is one request's headers as a transport keeps them.
type tenantHeaders struct{ tenant string }

func (h *tenantHeaders) LookupHeader(name string) ([]byte, bool) {
	if name == "X-Tenant" {
		return []byte(h.tenant), true
	}
	return nil, false
}

func (h *tenantHeaders) VisitHeaders(f func(name, value []byte) bool) {
	f([]byte("X-Tenant"), []byte(h.tenant))
}

// lendingReply is a transport's per-request Replier that also lends the
// request's headers (engine.HeadersLender): the engine asks for them only
// when a handler reads one, and the transport calls no SetHeaders.
type lendingReply struct {
	printReply
	hdrs tenantHeaders
}

func (l *lendingReply) RequestHeaders(*engine.Request) engine.Headers { return &l.hdrs }

// A transport whose every request has headers lends them from its
// Replier instead of setting them on each request (Request.SetHeaders,
// which still wins when called).
func ExampleHeadersLender() {
	s := engine.New(engine.Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(engine.Tool{Name: "whoami", Handler: func(c *engine.Call) error {
		c.Text("tenant " + c.Header("X-Tenant"))
		return nil
	}})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		fmt.Println(err)
		return
	}
	rep := &lendingReply{printReply: printReply{done: make(chan struct{})}, hdrs: tenantHeaders{tenant: "acme"}}
	r := engine.NewScope(s, "http").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		fmt.Println(e.Message)
		return
	}
	r.Run()
	<-rep.done
	// Output: tenant acme
}
