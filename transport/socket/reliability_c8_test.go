package socket

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestRequestCancelPairs (RELIABILITY C8, the rapid-reset shape): one
// connection writes 50,000 request+cancel pairs in one burst, each
// request for a tool that runs until it is cancelled. The handlers running
// at once stay bounded by MaxInFlight (the connection stops taking frames
// there; the input waits in the backlog, unbounded here), goroutines never
// pile up, every cancelled request goes unanswered (C7), and the
// connection and the process go on serving: a request sent after the
// burst is answered, and so is one on another connection.
func TestRequestCancelPairs(t *testing.T) {
	const pairs, maxInFlight = 50_000, 64
	eng := engine.New(engine.Config{MaxInFlight: maxInFlight})
	var running, peakRunning atomic.Int64
	_ = eng.AddTool(engine.Tool{Name: "block", Handler: func(c *engine.Call) error {
		n := running.Add(1)
		for p := peakRunning.Load(); n > p && !peakRunning.CompareAndSwap(p, n); p = peakRunning.Load() {
		}
		<-c.Done()
		running.Add(-1)
		return c.Err()
	}})
	// The whole burst may wait in the input backlog (11 MB): how a
	// backlog past its bound closes the connection is TestInputBacklogBounded.
	f := start(t, "tcp", Config{MaxBacklog: -1}, eng)
	base := runtime.NumGoroutine()
	var peakG atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
				peakG.Store(g)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	c := f.dial()
	var b strings.Builder
	for i := 1; i <= pairs; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n", i)
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", i)
	}
	werr := make(chan error, 1)
	go func() { _, err := c.c.Write([]byte(b.String())); werr <- err }()
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	c.send(req(`"last"`, "tools/list", ""))
	_ = c.c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer to the request after the burst: %v", err)
		}
		m := parse(t, strings.TrimSuffix(l, "\n"))
		if string(m.ID) == `"last"` {
			break
		}
		t.Fatalf("a cancelled request was answered (C7): %.120s", l)
	}
	close(stop)
	<-sampled
	if got := eng.Stats().Requests.Load(); got < pairs {
		t.Errorf("engine saw %d requests, want at least %d", got, pairs)
	}
	if p := peakRunning.Load(); p > maxInFlight {
		t.Errorf("%d handlers ran at once, MaxInFlight is %d", p, maxInFlight)
	}
	if g := peakG.Load(); g > int64(base+maxInFlight+128) {
		t.Errorf("goroutines peaked at %d (%d before the burst): not bounded by MaxInFlight %d", g, base, maxInFlight)
	}
	other := f.dial()
	other.send(req("1", "tools/list", ""))
	if m := parse(t, other.line()); string(m.ID) != "1" {
		t.Fatalf("another connection: %+v", m)
	}
	t.Logf("%d pairs; handlers at once at most %d; goroutines %d → peak %d", pairs, peakRunning.Load(), base, peakG.Load())
}
