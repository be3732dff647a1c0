package streamhttp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// fanoutServer serves an engine with one resource family over fasthttp on
// loopback and returns it with its address.
func fanoutServer(t *testing.T, cfg Config) (*engine.Server, *Server, string) {
	t.Helper()
	eng := engine.New(engine.Config{MaxInFlight: 16})
	_ = eng.AddResource(engine.Resource{URI: "test://fan", Name: "fan", Handler: func(c *engine.Call, uri string, _ map[string]string) error {
		return engine.ErrResourceNotFound(uri)
	}})
	hs := New(eng, cfg)
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
		_ = eng.Shutdown(ctx)
	})
	return eng, hs, ln.Addr().String()
}

const listenBody = `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://fan"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

type listener struct {
	conn net.Conn
	r    *bufio.Reader
	id   int
}

// openListen opens one listen stream and reads up to its ack.
func openListen(t *testing.T, addr string, id int) *listener {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(listenBody, id)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	l := &listener{conn: c, r: bufio.NewReaderSize(c, 4096), id: id}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, _ := l.r.ReadString('\n')
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("listen %d: %q", id, status)
	}
	for { // headers
		line, err := l.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	if ev := l.next(t); !strings.Contains(ev, "notifications/subscriptions/acknowledged") || !strings.Contains(ev, fmt.Sprintf(`"io.modelcontextprotocol/subscriptionId":%d}`, id)) {
		t.Fatalf("listen %d: first event %q (SUB-03)", id, ev)
	}
	return l
}

// next returns the data of the next SSE event, skipping comments.
func (l *listener) next(t *testing.T) string {
	for {
		line, err := l.r.ReadString('\n')
		if err != nil {
			t.Fatalf("listener %d: %v", l.id, err)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			_, _ = l.r.ReadString('\n') // the blank line ending the event
			return strings.TrimSuffix(d, "\n")
		}
	}
}

// TestFanout1000: 1,000 listen streams over real HTTP each receive every
// update exactly once, in order, tagged with their own subscription id;
// shutdown completes each with its final result; no goroutine is left.
func TestFanout1000(t *testing.T) {
	leakCheck(t)
	const n, updates = 1000, 20
	eng, _, addr := fanoutServer(t, Config{})
	ls := make([]*listener, n)
	for i := range ls {
		ls[i] = openListen(t, addr, i)
	}
	for eng.Stats().ListenStreams.Load() != n {
		time.Sleep(time.Millisecond)
	}
	for u := 0; u < updates; u++ {
		eng.ResourceUpdated(fmt.Sprintf("test://fan/%d", u)) // distinct URIs: nothing may collapse
	}
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for _, l := range ls {
		wg.Add(1)
		go func(l *listener) {
			defer wg.Done()
			_ = l.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			tag := fmt.Sprintf(`"io.modelcontextprotocol/subscriptionId":%d}`, l.id)
			for u := 0; u < updates; u++ {
				ev := l.next(t)
				if !strings.Contains(ev, fmt.Sprintf(`"uri":"test://fan/%d"`, u)) || !strings.Contains(ev, tag) {
					errs <- fmt.Sprintf("listener %d update %d: %s", l.id, u, ev)
					return
				}
			}
		}(l)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// Shutdown completes every stream with a final result (SUB-10).
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Shutdown(ctx)
	}()
	for _, l := range ls {
		_ = l.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		ev := l.next(t)
		if !strings.Contains(ev, fmt.Sprintf(`"id":%d,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":%d`, l.id, l.id)) {
			t.Fatalf("listener %d final: %s", l.id, ev)
		}
		l.conn.Close()
	}
}

// TestFanoutSlowConsumer: a listener that stops reading is closed as a
// slow consumer and counted; the others get every update (C5, issue 5).
func TestFanoutSlowConsumer(t *testing.T) {
	leakCheck(t)
	eng, hs, addr := fanoutServer(t, Config{MaxListenPendingBytes: 32 << 10})
	slow := openListen(t, addr, 0) // never read again
	defer slow.conn.Close()
	fast := make([]*listener, 4)
	for i := range fast {
		fast[i] = openListen(t, addr, i+1)
	}
	for eng.Stats().ListenStreams.Load() != 5 {
		time.Sleep(time.Millisecond)
	}
	// ~10 MB per stream: past the kernel's socket buffers and the 32 KiB
	// queue for the reader that stopped; the others are kept in step.
	const updates = 5000
	pad := strings.Repeat("p", 2000)
	var read sync.WaitGroup
	progress := make([]chan int, len(fast))
	for i, l := range fast {
		progress[i] = make(chan int, updates)
		read.Add(1)
		go func(l *listener, done chan<- int) {
			defer read.Done()
			for u := 0; u < updates; u++ {
				if ev := l.next(t); !strings.Contains(ev, fmt.Sprintf(`"uri":"test://fan/%d/`, u)) {
					t.Errorf("listener %d update %d: %.80s", l.id, u, ev)
					return
				}
				done <- u
			}
		}(l, progress[i])
	}
	for u := 0; u < updates; u++ {
		eng.ResourceUpdated(fmt.Sprintf("test://fan/%d/%s", u, pad))
		if u%8 == 7 {
			for _, p := range progress { // wait until every fast reader has this one
				for got := -1; got < u; {
					select {
					case got = <-p:
					case <-time.After(10 * time.Second):
						t.Fatalf("fast listener stalled at update %d", u)
					}
				}
			}
		}
	}
	read.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for hs.Stats().SlowConsumers.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("slow listener not closed: SlowConsumers=%d", hs.Stats().SlowConsumers.Load())
		}
		time.Sleep(time.Millisecond)
	}
	if got := eng.Stats().ListenStreams.Load(); got != 4 {
		t.Fatalf("listen streams after the slow one was closed: %d", got)
	}
	for _, l := range fast {
		l.conn.Close()
	}
}

// TestFanoutInlinePastSocketBuffer: events written from the publisher
// (inline, while the socket has room) and events queued for the stream's
// pump (once the socket is full) interleave on one stream: a listener that
// stops reading while 16 MB of updates go out, then reads again, gets
// every one once, in order, whole — also the one a partial write split
// (the events are 64 KiB, so the write that meets a full socket is short).
func TestFanoutInlinePastSocketBuffer(t *testing.T) {
	leakCheck(t)
	eng, hs, addr := fanoutServer(t, Config{MaxListenPendingBytes: 64 << 20})
	l := openListen(t, addr, 7)
	defer l.conn.Close()
	for eng.Stats().ListenStreams.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	const updates = 256
	pad := strings.Repeat("q", 64<<10)
	sawQueue := false
	for u := 0; u < updates; u++ {
		eng.ResourceUpdated(fmt.Sprintf("test://fan/%d/%s", u, pad))
		sawQueue = sawQueue || hs.Gauges().QueuedBytes > 0
		time.Sleep(inlineGap) // paced: each event may go inline (a burst is queued)
	}
	if !sawQueue {
		t.Fatal("nothing was ever queued: the socket took 16 MB without a reader")
	}
	_ = l.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for u := 0; u < updates; u++ {
		ev := l.next(t)
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"uri":"test://fan/%d/%s"}}`, u, pad)
		if ev != want {
			t.Fatalf("update %d (%d bytes, want %d): %.100s … %.40s", u, len(ev), len(want), ev, ev[max(0, len(ev)-40):])
		}
	}
}

// TestFanoutRepeatAfterWrite: an update of a URI whose previous update has
// already been written (inline, from the publisher) is delivered, not
// collapsed into it: collapsing applies only to an event still queued.
func TestFanoutRepeatAfterWrite(t *testing.T) {
	leakCheck(t)
	eng, hs, addr := fanoutServer(t, Config{})
	l := openListen(t, addr, 3)
	defer l.conn.Close()
	for eng.Stats().ListenStreams.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	for u := 0; u < 5; u++ {
		eng.ResourceUpdated("test://fan/same")
		_ = l.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if ev := l.next(t); !strings.Contains(ev, `"uri":"test://fan/same"`) {
			t.Fatalf("update %d: %s", u, ev)
		}
	}
	if n := hs.Stats().Collapsed.Load(); n != 0 {
		t.Fatalf("%d updates collapsed with nothing queued", n)
	}
}
