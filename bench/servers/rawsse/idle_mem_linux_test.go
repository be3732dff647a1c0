package main

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/idlemem"
)

// TestIdleStreamBytes is streamhttp's TestIdleListenBytes for the raw SSE
// ceiling of the fan-out comparison: 1,000 listen streams from bare
// sockets, twice (collection off while they open, then a collection every
// 50 streams), and what each holds here once acknowledged and idle (live
// heap and goroutine stack). `go test -run IdleStreamBytes -v` prints it.
func TestIdleStreamBytes(t *testing.T) {
	var nogc, gc idlemem.Result
	t.Run("nogc", func(t *testing.T) { nogc = measureIdleStreams(t, 0) })
	t.Run("gc", func(t *testing.T) { gc = measureIdleStreams(t, 50) })
	idle := idlemem.Idle(gc, nogc)
	t.Logf("raw SSE stream: heap %.0f B + stack %.0f B = %.0f B (%.2f KiB) per idle stream", max(gc.HeapAlloc, nogc.HeapAlloc), nogc.StackOpen, idle, idle/1024)
}

func measureIdleStreams(t *testing.T, gcEvery int) idlemem.Result {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serveConn(c) })
		}
	})
	defer wg.Wait() // every connection's goroutine, after the streams are closed
	defer ln.Close()
	addr := ln.Addr().String()
	live := func() int {
		hub.mu.RLock()
		defer hub.mu.RUnlock()
		return len(hub.list)
	}
	const body = `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://fan"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	res, fds, err := idlemem.OpenListens(addr, 1000, gcEvery, func(i int) string { return fmt.Sprintf(body, i) }, live)
	idlemem.Close(fds) // each stream's reader sees it at once
	err = errors.Join(err, idlemem.WaitLive(live, 0, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("raw SSE stream: %v", res)
	if res.Goroutines > 1.05 {
		t.Errorf("%.2f goroutines per idle stream, want 1", res.Goroutines)
	}
	return res
}
