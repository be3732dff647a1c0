package linestream

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestShutdownMidRead: Scope.Shutdown while the first request of a
// three-line read runs: that request is cancelled, and the two after it
// are refused ("shutting down"), not run after Shutdown has returned
// (RELIABILITY C13, C14).
func TestShutdownMidRead(t *testing.T) {
	s := engine.New(engine.Config{})
	var ran atomic.Int32
	running := make(chan struct{}, 10)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	_ = s.AddTool(engine.Tool{Name: "block", Inline: true, Handler: func(c *engine.Call) error {
		ran.Add(1)
		running <- struct{}{}
		select {
		case <-c.Done():
		case <-time.After(400 * time.Millisecond):
		}
		c.Text("ok")
		return nil
	}})
	sc := engine.NewScope(s, "tcp")
	var mu sync.Mutex
	var got []string
	m := NewMem(sc, func(f []byte) error { mu.Lock(); got = append(got, string(f)); mu.Unlock(); return nil }, Config{}, nil)
	req := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	done := make(chan time.Time, 1)
	go func() {
		_ = m.Send([]byte(req("1") + "\n" + req("2") + "\n" + req("3")))
		done <- time.Now()
	}()
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := sc.Shutdown(ctx)
	at := time.Now()
	end := <-done
	mu.Lock()
	defer mu.Unlock()
	if ran.Load() != 1 || len(got) != 2 || !strings.Contains(got[0], "shutting down") {
		t.Errorf("Scope.Shutdown=%v; %d handlers ran, the read ended %v after Shutdown returned, out %q; want requests 2 and 3 refused",
			err, ran.Load(), end.Sub(at).Round(time.Millisecond), got)
	}
}
