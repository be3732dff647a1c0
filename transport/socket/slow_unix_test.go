//go:build unix

package socket

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// These tests watch gnet's outbound buffer: MaxPending and the
// write-progress deadline measured as bytes the peer took. gnet's Windows
// backend has no such buffer (a write blocks until the socket takes it
// all, see sys_windows.go), so they hold on the Unix systems only.

// TestSlowReaderClosedAtMaxPending: a peer that sends requests and never
// reads is closed once its unwritten output passes MaxPending, and it is
// counted (A18); other connections are served meanwhile.
func TestSlowReaderClosedAtMaxPending(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			f := start(t, network, Config{MaxPending: 1 << 20, WriteTimeout: -1}, bigServer(t))
			slow := dialSmallWindow(t, f.addr)
			go func() {
				for i := 0; i < 200; i++ {
					if _, err := fmt.Fprintf(slow, "%s\n", req(fmt.Sprint(i), "tools/call", `"name":"big","arguments":{"n":65536}`)); err != nil {
						return
					}
				}
			}()
			waitFor(t, "the slow consumer to be closed", func() bool { return f.eng.Stats().SlowConsumers.Load() == 1 })
			waitFor(t, "its connection released", func() bool { return f.srv.Stats().Open.Load() == 0 })
			c := f.dial()
			c.send(req("1", "tools/call", `"name":"echo","arguments":{"text":"ok"}`))
			if !strings.Contains(c.line(), `"text":"ok"`) {
				t.Fatal("server did not serve another connection")
			}
		})
	}
}

// TestReaderThatKeepsUpIsNotCut: a big answer to a peer that reads it,
// slowly but steadily, is not cut by the write-progress deadline.
func TestReaderThatKeepsUpIsNotCut(t *testing.T) {
	f := start(t, "tcp", Config{WriteTimeout: 200 * time.Millisecond}, bigServer(t))
	c := dialSmallWindow(t, f.addr)
	if _, err := fmt.Fprintf(c, "%s\n", req("1", "tools/call", `"name":"big","arguments":{"n":4194304}`)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	total := 0
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, err := c.Read(buf)
		total += n
		if n > 0 && buf[n-1] == '\n' {
			break
		}
		if err != nil {
			t.Fatalf("read after %d bytes: %v (WriteTimeouts %d, SlowConsumers %d)", total, err, f.srv.Stats().WriteTimeouts.Load(), f.eng.Stats().SlowConsumers.Load())
		}
		time.Sleep(2 * time.Millisecond) // slow, never stalled for 200 ms
	}
	if total < 4<<20 || f.srv.Stats().WriteTimeouts.Load() != 0 {
		t.Fatalf("read %d bytes, WriteTimeouts %d", total, f.srv.Stats().WriteTimeouts.Load())
	}
}
