package streamhttp

import (
	"testing"
	"time"
)

// TestListenDropsRequestCtx: a listen stream taken over from fasthttp
// keeps no reference to the request's RequestCtx, which fasthttp recycles
// once the hijack handler has run; the stream still delivers.
func TestListenDropsRequestCtx(t *testing.T) {
	leakCheck(t)
	xs := make(chan *exchange, 1)
	streamOpened = func(x *exchange) { xs <- x }
	defer func() { streamOpened = nil }()
	eng, _, addr := fanoutServer(t, Config{})
	l := openListen(t, addr, 9) // the acknowledgement read: the stream runs
	defer l.conn.Close()
	x := <-xs
	x.mu.Lock()
	ctx := x.fw.ctx
	x.mu.Unlock()
	if ctx != nil {
		t.Error("an open listen stream holds fasthttp's RequestCtx")
	}
	for eng.Stats().ListenStreams.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	eng.ResourceUpdated("test://fan/z")
	_ = l.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if ev := l.next(t); ev != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9},"uri":"test://fan/z"}}` {
		t.Fatalf("update: %s", ev)
	}
}
