package engine

import (
	"context"
	"testing"
)

// TestCallToolKept: a Call keeps the last tool its lookup found
// (Call.lookupTool, the path of a request outside a batch) and answers
// the same name from it while the registry is the same; a kept tool is
// never used for another registry (another server, a removed or replaced
// tool) nor for another name.
func TestCallToolKept(t *testing.T) {
	s, release := fastSlowServer()
	defer func() { _ = s.Shutdown(context.Background()) }()
	defer close(release)
	c := &Call{srv: s}
	fast := s.cache.Load().toolsByName["fast"]
	if got := c.lookupTool([]byte("fast")); got != fast || c.toolHit != fast || c.toolIn != s.cache.Load() {
		t.Fatalf("first lookup: %p (kept %p), want %p kept", got, c.toolHit, fast)
	}
	if got := c.lookupTool([]byte("fast")); got != fast {
		t.Fatalf("kept lookup: %p, want %p", got, fast)
	}
	if got, want := c.lookupTool([]byte("slow")), s.cache.Load().toolsByName["slow"]; got != want || want == nil {
		t.Fatalf("another name: %p, want %p", got, want)
	}
	if got := c.lookupTool([]byte("none")); got != nil || c.toolHit == nil {
		t.Fatalf("an unknown name: %p (kept %p), want nil and the last hit kept", got, c.toolHit)
	}

	other := New(Config{})
	defer func() { _ = other.Shutdown(context.Background()) }()
	_ = other.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("other"); return nil }})
	_ = c.lookupTool([]byte("fast"))
	c.srv = other // as if the pool gave c to another server's request
	if got, want := c.lookupTool([]byte("fast")), other.cache.Load().toolsByName["fast"]; got != want || got == fast {
		t.Fatalf("another server's lookup: %p, want its own tool %p", got, want)
	}
	c.srv = s
	if got := c.lookupTool([]byte("fast")); got != fast {
		t.Fatalf("back on the first server: %p, want %p", got, fast)
	}
	s.RemoveTool("fast")
	if got := c.lookupTool([]byte("fast")); got != nil {
		t.Fatalf("a removed tool: %p, want nil", got)
	}
	_ = s.AddTool(Tool{Name: "fast", Inline: true, Handler: func(c *Call) error { c.Text("new"); return nil }})
	if got, want := c.lookupTool([]byte("fast")), s.cache.Load().toolsByName["fast"]; got != want || got == fast {
		t.Fatalf("a replaced tool: %p, want the new one %p", got, want)
	}
}
