package engine

import (
	"bytes"
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// beginChecked peeks msg, begins it on a new scope of s with a capture
// for its answer, and checks it (the test fails on an error of either).
func beginChecked(t *testing.T, s *Server, msg []byte) (*Request, *capture) {
	t.Helper()
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	rep := &capture{done: make(chan struct{})}
	r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	return r, rep
}

// capture is a Replier that keeps the last reply.
type capture struct {
	mu    sync.Mutex
	reply []byte
	done  chan struct{}
}

func (r *capture) Notify(*Request, []byte) error { return nil }
func (r *capture) Reply(_ *Request, frame []byte, _ int) error {
	r.mu.Lock()
	r.reply = append([]byte(nil), frame...)
	r.mu.Unlock()
	return nil
}
func (r *capture) Done(*Request) { close(r.done) }

// TestBeginOwnsTheMessage: Begin copies the message and re-points every
// span of the envelope, clientInfo included, so a handler that runs after
// the transport reused its read buffer still sees its own request (the
// clientInfo span once read the next frame's bytes).
func TestBeginOwnsTheMessage(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	gate := make(chan struct{})
	got := make(chan [3]string, 1)
	_ = s.AddTool(Tool{Name: "who", Handler: func(c *Call) error {
		<-gate // runs after the transport has reused its buffer
		got <- [3]string{string(c.ClientInfo()), string(c.ProgressToken()), c.ProtocolVersion()}
		c.Text("ok")
		return nil
	}})
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"who","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"first","version":"1"},"progressToken":"tok"}}}`)
	r, rep := beginChecked(t, s, msg)
	r.Start() // on a worker: it waits for the gate
	copy(msg, bytes.Repeat([]byte{'#'}, len(msg)))
	close(gate)
	v := <-got
	<-rep.done
	if v[0] != `{"name":"first","version":"1"}` || v[1] != `"tok"` || v[2] != "2026-07-28" {
		t.Fatalf("handler saw %q after the buffer was reused", v)
	}
}

// TestBeginBorrowedCopiesWhenHandedOver: with BeginBorrowed the request
// reads the transport's buffer in place while it runs where it was begun,
// and is copied when it goes to a worker (or outlives its handler as a
// listen stream), so a transport may reuse its buffer as soon as Start
// returns either way.
func TestBeginBorrowedCopiesWhenHandedOver(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	gate := make(chan struct{})
	got := make(chan [2]string, 1)
	_ = s.AddTool(Tool{Name: "later", Timeout: time.Second, Handler: func(c *Call) error {
		<-gate
		got <- [2]string{string(c.ClientInfo()), string(c.ProgressToken())}
		c.Text("ok")
		return nil
	}})
	inlineSaw := ""
	_ = s.AddTool(Tool{Name: "now", Inline: true, Handler: func(c *Call) error {
		inlineSaw = string(c.ClientInfo())
		c.Text("ok")
		return nil
	}})
	begin := func(name string) (*Request, []byte, *capture) {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"first","version":"1"},"progressToken":"tok"}}}`)
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		rep := &capture{done: make(chan struct{})}
		r := NewScope(s, "").BeginBorrowed(context.Background(), msg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		return r, msg, rep
	}
	r, _, rep := begin("now")
	r.Start() // runs here: nothing to copy
	<-rep.done
	if inlineSaw != `{"name":"first","version":"1"}` {
		t.Fatalf("inline handler saw %q", inlineSaw)
	}
	r2, msg, rep2 := begin("later")
	r2.Start() // a worker: copied before Start returns
	copy(msg, bytes.Repeat([]byte{'#'}, len(msg)))
	close(gate)
	if v := <-got; v[0] != `{"name":"first","version":"1"}` || v[1] != `"tok"` {
		t.Fatalf("worker saw %q after the transport reused its buffer", v)
	}
	<-rep2.done
	if !bytes.Contains(rep2.reply, []byte(`"id":1`)) {
		t.Fatalf("reply %s", rep2.reply)
	}
}

// TestCallAndRequestAreApart: the handler's Call has none of the binding
// operations; they live on Request. A compile-time list would be brittle,
// so the method sets are compared by name.
func TestCallAndRequestAreApart(t *testing.T) {
	binding := []string{"Begin", "Check", "CheckMeta", "CheckVersion", "CheckMethod", "CheckTarget",
		"CheckCapabilities", "Fail", "Start", "Run", "SetRawResult", "TransportData", "SetTransportData",
		"Envelope", "Ref", "Cancel", "MayNotify", "HasTimeout", "Tool", "Inline"}
	for _, name := range binding {
		if hasMethod((*Call)(nil), name) {
			t.Errorf("Call has the binding method %s", name)
		}
	}
	for _, name := range []string{"Check", "Fail", "Start", "Run", "SetRawResult", "TransportData", "Envelope", "Ref"} {
		if !hasMethod((*Request)(nil), name) {
			t.Errorf("Request lacks %s", name)
		}
	}
}

func hasMethod(v any, name string) bool {
	_, ok := reflect.TypeOf(v).MethodByName(name)
	return ok
}

// TestHandlerCannotReachBinding: a handler's *Call does not convert to the
// transports' *Request, and has none of its operations; the embedder's
// *Server has none of the transport-facing ones (they are on Scope).
func TestHandlerCannotReachBinding(t *testing.T) {
	call, req := reflect.TypeFor[*Call](), reflect.TypeFor[*Request]()
	if call.ConvertibleTo(req) || req.ConvertibleTo(call) {
		t.Fatal("*Call and *Request convert into each other")
	}
	for i := range req.NumMethod() {
		m := req.Method(i).Name
		if _, ok := call.MethodByName(m); ok && m != "Method" && m != "Server" && m != "IsListen" {
			t.Errorf("*Call has the binding's %s", m)
		}
	}
	srv := reflect.TypeFor[*Server]()
	for _, m := range []string{"NewScope", "NewTransportScope", "ConnOpen", "ConnClose", "ServerMeta", "Begin"} {
		if _, ok := srv.MethodByName(m); ok {
			t.Errorf("*Server has the transport-facing %s", m)
		}
	}
	for _, m := range []string{"ConnOpen", "ConnClose", "ServerMeta", "Begin", "BeginBorrowed", "Shutdown"} {
		if _, ok := reflect.TypeFor[*Scope]().MethodByName(m); !ok {
			t.Errorf("*Scope lacks %s", m)
		}
	}
}

// TestPreparedRequest: a request peeked straight into a prepared Call's
// envelope answers as one begun from the transport's own envelope; a
// prepared request reused after a notification and then discarded, or
// one that borrowed a message larger than maxKeep, keeps no span of the
// transport's buffer once back in the pool (C16), while a small one may.
func TestPreparedRequest(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text(c.Name()); return nil }})
	sc := NewScope(s, "stdio")

	var env codec.Envelope
	want := &capture{done: make(chan struct{})}
	msg := callMsg("fast")
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	r := sc.BeginBorrowed(context.Background(), msg, &env, want, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Run()

	pre := sc.Prepare()
	if err := codec.Peek([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), pre.Envelope()); err != nil {
		t.Fatal(err)
	}
	// Not a request: the same prepared request takes the next message.
	got := &capture{done: make(chan struct{})}
	if err := codec.Peek(msg, pre.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginPrepared(pre, context.Background(), msg, got, nil, sc.Now())
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Run()
	if !bytes.Equal(got.reply, want.reply) || len(got.reply) == 0 {
		t.Fatalf("prepared: %s\nbegun: %s", got.reply, want.reply)
	}

	pre = sc.Prepare()
	c := pre.c
	if err := codec.Peek(msg, pre.Envelope()); err != nil {
		t.Fatal(err)
	}
	pre.Discard()
	if !reflect.ValueOf(c.env).IsZero() {
		t.Fatal("a discarded request keeps its envelope")
	}

	big := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast","arguments":{"pad":"` + string(bytes.Repeat([]byte{'x'}, maxKeep)) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	pre = sc.Prepare()
	c = pre.c
	if err := codec.Peek(big, pre.Envelope()); err != nil {
		t.Fatal(err)
	}
	r = sc.BeginPrepared(pre, context.Background(), big, &nopReply{}, nil, 0)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Run()
	if !reflect.ValueOf(c.env).IsZero() {
		t.Fatal("a released request keeps spans of a borrowed message over maxKeep")
	}
}
