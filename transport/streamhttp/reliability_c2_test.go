package streamhttp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestC2SlowBodyNetHTTP: C2 on the net/http adapter (behind NetListener,
// as the package documentation recommends). net/http bounds a whole
// request (ReadTimeout, 30 s here) but not the wait between two of its
// reads; the connection does: a body that stalls, or a header block that
// stops half-way, is cut at ReadIdleTimeout (408 for the body, a close for
// the headers) and counted (ReadIdleTimeouts); a body that keeps arriving
// is not cut, nor is a keep-alive connection that waits between requests.
func TestC2SlowBodyNetHTTP(t *testing.T) {
	leakCheck(t)
	h := startHarness(t, netFE, Config{ReadTimeout: 30 * time.Second, ReadIdleTimeout: 300 * time.Millisecond}, defaultOptions())
	head := func(n int) string {
		return "POST /mcp HTTP/1.1\r\nHost: " + h.addr + "\r\n" + strings.Join(ex2Hdr(), "\r\n") + fmt.Sprintf("\r\nContent-Length: %d\r\n\r\n", n)
	}
	idle := func() uint64 { return h.srv.Stats().ReadIdleTimeouts.Load() }

	// Stalled body: the headers and a few bytes, then nothing.
	c := h.dial(t)
	c.write([]byte(head(len(fixture.Ex2Body)) + fixture.Ex2Body[:10]))
	resp, err := c.readResponse(10 * time.Second)
	if err != nil {
		t.Fatalf("stalled body: %v", err)
	}
	if resp.StatusCode != 408 {
		t.Fatalf("stalled body: %d, want 408", resp.StatusCode)
	}
	if !c.closedByServer(2 * time.Second) {
		t.Error("connection left open after 408")
	}
	if idle() != 1 {
		t.Errorf("ReadIdleTimeouts = %d after the stalled body, want 1", idle())
	}

	// Stalled header block: closed, counted.
	c = h.dial(t)
	c.write([]byte("POST /mcp HTTP/1.1\r\nHost: " + h.addr + "\r\nContent-Ty"))
	if !c.closedByServer(10 * time.Second) {
		t.Fatal("a header block stalled half-way was kept")
	}
	if idle() != 2 {
		t.Errorf("ReadIdleTimeouts = %d after the stalled headers, want 2", idle())
	}

	// Trickled but steady: every 100 ms, for longer than the idle limit
	// in all; then a wait between keep-alive requests longer than it.
	c = h.dial(t)
	c.write([]byte(head(len(fixture.Ex2Body))))
	for i := 0; i < len(fixture.Ex2Body) && i < 200; i += 20 {
		time.Sleep(100 * time.Millisecond)
		c.write([]byte(fixture.Ex2Body[i:min(i+20, len(fixture.Ex2Body))]))
	}
	if len(fixture.Ex2Body) > 200 {
		c.write([]byte(fixture.Ex2Body[200:]))
	}
	if resp, err := c.readResponse(5 * time.Second); err != nil || resp.StatusCode != 200 {
		t.Fatalf("steady trickle: %v %v", resp, err)
	} else {
		c.readAll(resp)
	}
	time.Sleep(700 * time.Millisecond)
	if resp, _ := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
		t.Fatalf("next request on the kept-alive connection: %d", resp.StatusCode)
	}
	if idle() != 2 {
		t.Errorf("ReadIdleTimeouts = %d after the steady and keep-alive cases, want 2", idle())
	}
}
