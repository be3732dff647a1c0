package socket

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// TestMaxConnsPerIP (RELIABILITY C11 on sockets): past MaxConnsPerIP
// connections from one client IP a new one from it is closed at once,
// before any session state, and counted (Stats.RefusedPerIP); a client
// from another address is served, the open connections are unaffected,
// and a closed connection gives its place back.
func TestMaxConnsPerIP(t *testing.T) {
	f := start(t, "tcp", Config{MaxConnsPerIP: 2}, nil)
	a, b := f.dial(), f.dial()
	a.send(req("1", "tools/list", ""))
	b.send(req("1", "tools/list", ""))
	a.line()
	b.line()
	opened := f.srv.Stats().Accepted.Load()
	c := f.dial()
	c.eof()
	if got := f.srv.Stats().RefusedPerIP.Load(); got != 1 {
		t.Fatalf("RefusedPerIP = %d, want 1", got)
	}
	if got := f.srv.Stats().Accepted.Load(); got != opened {
		t.Errorf("Accepted went from %d to %d: the refused connection was served", opened, got)
	}
	a.send(req("2", "tools/call", `"name":"echo","arguments":{"text":"still"}`))
	if !strings.Contains(a.line(), "still") {
		t.Fatal("open connection not served")
	}

	// Another client address (127.0.0.2 is loopback on Linux; skipped
	// where the system does not route it).
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	if oc, err := d.Dial("tcp", f.addr.String()); err != nil {
		t.Logf("no second loopback address (%v): that part is skipped", err)
	} else {
		t.Cleanup(func() { oc.Close() })
		other := &client{t: t, c: oc, r: bufio.NewReader(oc)}
		other.send(req("1", "tools/list", ""))
		other.line()
		if got := f.srv.Stats().RefusedPerIP.Load(); got != 1 {
			t.Fatalf("RefusedPerIP = %d after a client from another address", got)
		}
	}

	// A closed connection gives its place back.
	b.c.Close()
	waitFor(t, "the closed connection released", func() bool {
		e := f.dial()
		e.send(req("1", "tools/list", ""))
		_ = e.c.SetReadDeadline(time.Now().Add(2 * time.Second))
		l, err := e.r.ReadString('\n')
		e.c.Close()
		return err == nil && strings.Contains(l, `"id":1`)
	})
}

// TestMaxConnsPerIPUnix: Unix-socket connections have no client address
// and are not counted against MaxConnsPerIP.
func TestMaxConnsPerIPUnix(t *testing.T) {
	f := start(t, "unix", Config{MaxConnsPerIP: 1}, nil)
	for i := 0; i < 3; i++ {
		c := f.dial()
		c.send(req("1", "tools/list", ""))
		c.line()
	}
	if got := f.srv.Stats().RefusedPerIP.Load(); got != 0 {
		t.Fatalf("RefusedPerIP = %d on a Unix socket", got)
	}
}
