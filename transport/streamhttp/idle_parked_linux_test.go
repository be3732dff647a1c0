package streamhttp

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestIdleListenParked: once its acknowledgement is written, an idle
// listen stream on a plain socket holds no goroutine (its pump has
// returned: the stream is parked), no write buffer, and no reference to
// fasthttp's RequestCtx (recycled by fasthttp once the connection is
// taken over); its keep-alive timer is armed. An update still arrives,
// one queued behind a full socket too (the pump is started again), and
// the final result at shutdown (SUB-10).
func TestIdleListenParked(t *testing.T) {
	leakCheck(t)
	xs := make(chan *exchange, 1)
	streamOpened = func(x *exchange) { xs <- x }
	defer func() { streamOpened = nil }()
	eng, _, addr := fanoutServer(t, Config{MaxListenPendingBytes: 64 << 20})
	l := openListen(t, addr, 5)
	defer l.conn.Close()
	x := <-xs
	parked := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !x.parked.Load(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the stream never parked", what)
			}
		}
		x.mu.Lock()
		queue, spare, keys, ctx, armed := x.queue, x.spare, x.keys, x.fw.ctx, x.kaArmed
		x.mu.Unlock()
		if queue != nil || spare != nil || keys != nil {
			t.Errorf("%s: an idle stream holds write buffers: queue %d, spare %d, keys %d bytes of capacity", what, cap(queue), cap(spare), 8*cap(keys))
		}
		if ctx != nil {
			t.Errorf("%s: an idle stream holds fasthttp's RequestCtx", what)
		}
		if !armed {
			t.Errorf("%s: the keep-alive timer is not armed", what)
		}
		buf := make([]byte, 1<<20)
		if st := string(buf[:runtime.Stack(buf, true)]); strings.Contains(st, "(*exchange).rawPump") || strings.Contains(st, "(*exchange).pump(") {
			t.Errorf("%s: a pump goroutine is alive for a parked stream:\n%s", what, st)
		}
	}
	parked("after the acknowledgement")

	eng.ResourceUpdated("test://fan/a")
	_ = l.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if ev := l.next(t); ev != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"uri":"test://fan/a"}}` {
		t.Fatalf("update: %s", ev)
	}
	parked("after an update written inline")

	// More than the socket takes while nobody reads: the rest waits in
	// the queue for a pump started for it.
	const big = 64
	pad := strings.Repeat("p", 64<<10)
	for u := range big {
		eng.ResourceUpdated(fmt.Sprintf("test://fan/%d/%s", u, pad))
	}
	for u := range big {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"uri":"test://fan/%d/%s"}}`, u, pad)
		if ev := l.next(t); ev != want {
			t.Fatalf("queued update %d: %.80s", u, ev)
		}
	}
	parked("after a backlog")

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- eng.Shutdown(ctx)
	}()
	ev := l.next(t)
	if err := <-done; err != nil {
		t.Error(err)
	}
	if !strings.Contains(ev, `"id":5,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":5`) {
		t.Fatalf("final: %s", ev)
	}
	// The stream ends: the server closes the connection.
	if line, err := l.r.ReadString('\n'); err == nil {
		t.Fatalf("after the final result: %q", line)
	}
}
