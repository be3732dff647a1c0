package linestream

import (
	"context"
	"runtime"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/engine"
)

// nopDriver takes every write and ignores wakes.
type nopDriver struct{}

func (nopDriver) Write(b []byte) (int, error) { return len(b), nil }
func (nopDriver) WakeOutput()                 {}
func (nopDriver) WakeInput()                  {}
func (nopDriver) Abort(error)                 {}

// TestIdleConnBytes: what a connection keeps once it has served one call
// and gone idle — the Conn, its decoder, and whatever New and the call
// left behind — measured on the live heap over 2,000 connections (issue
// 21 item 6: ≤ 1.0 KiB per idle TCP connection at 10,000, gnet's own
// share included). Not timed: it counts bytes.
func TestIdleConnBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	s := engine.New(engine.Config{})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	// Inline, as the reference server's echo: the answer is written before
	// Feed returns, so every connection is idle when the heap is read.
	if err := s.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		c.Text("hi")
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	scope := engine.NewScope(s, "")
	line := []byte(req(1, "tools/call", `"name":"echo","arguments":{"text":"hi"}`) + "\n")
	const n = 2000
	conns := make([]*Conn, n)
	warm := New(scope, nopDriver{}, Config{}, context.Background(), nil)
	warm.Feed(line)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // twice: the pools' victim caches go too
	runtime.ReadMemStats(&before)
	for i := range conns {
		conns[i] = New(scope, nopDriver{}, Config{}, context.Background(), nil)
		conns[i].Feed(line)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	runtime.KeepAlive(conns)
	t.Logf("%.0f bytes per idle connection (Conn %d bytes)", per, unsafe.Sizeof(Conn{}))
	const max = 480
	if per > max {
		t.Fatalf("an idle connection holds %.0f bytes, want ≤ %d", per, max)
	}
}
