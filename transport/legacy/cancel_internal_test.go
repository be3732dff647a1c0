package legacy

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestForgetBeforeStart: a session ended between addCall and start (a
// DELETE racing a POST) cancels the call without a panic, and the call is
// then not run.
func TestForgetBeforeStart(t *testing.T) {
	eng := engine.New(engine.Config{Name: "t", Version: "1"})
	s := New(eng, Config{})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
	}()
	ss := &session{s: s, id: "sid"}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	c := newCall()
	if !ss.addCall("1", c) {
		t.Fatal("addCall refused")
	}
	if !s.forget(ss) {
		t.Fatal("forget: session not held")
	}
	c.mu.Lock()
	why := c.cancelled
	c.mu.Unlock()
	if why != errSessionEnded {
		t.Fatalf("cancelled = %v, want %v", why, errSessionEnded)
	}
	// Starting it now answers it as cancelled instead of running it.
	msg := []byte(`{"jsonrpc":"2.0","id":"1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + s.modern + `","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if e := s.start(context.Background(), msg, c, nil, "", nil, nil); e != nil {
		t.Fatalf("start: %v", e)
	}
	_, reply, done := c.take()
	if !done || reply == nil || !bytes.Contains(reply.frame, []byte("Request cancelled")) {
		t.Fatalf("after start: done %v, reply %+v; want the request answered as cancelled", done, reply)
	}
}
