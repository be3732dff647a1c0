package streamhttp

import (
	"bytes"
	"encoding/binary"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func proxyV2(cmd, fam byte, addr []byte) []byte {
	b := append([]byte(nil), proxyV2Sig...)
	b = append(b, 0x20|cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(addr)))
	return append(b, addr...)
}

func v2addr4(src, dst [4]byte, sport, dport uint16) []byte {
	b := append(src[:], dst[:]...)
	b = binary.BigEndian.AppendUint16(b, sport)
	return binary.BigEndian.AppendUint16(b, dport)
}

func TestParseProxy(t *testing.T) {
	v6 := make([]byte, 36)
	copy(v6, netip.MustParseAddr("2001:db8::1").AsSlice())
	binary.BigEndian.PutUint16(v6[32:], 4242)
	for i, v := range []struct {
		in      string
		src     string // "" for local
		n       int    // header length; 0: need more
		wantErr string
	}{
		0:  {in: "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET", src: "192.0.2.1:56324", n: 45},
		1:  {in: "PROXY TCP6 2001:db8::1 2001:db8::2 1 2\r\n", src: "[2001:db8::1]:1", n: 40},
		2:  {in: "PROXY UNKNOWN\r\n", n: 15},
		3:  {in: "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", n: 35},
		4:  {in: "PROXY TCP4 192.0.2.1 198.51.100.2 5632", n: 0},
		5:  {in: "PROX", n: 0},
		6:  {in: "GET / HTTP/1.1\r\n", wantErr: "PROXY"},
		7:  {in: "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n", wantErr: "PROXY"},
		8:  {in: "PROXY TCP4 192.0.2.1  198.51.100.2 1 2\r\n", wantErr: "PROXY"},
		9:  {in: "PROXY TCP4 2001:db8::1 198.51.100.2 1 2\r\n", wantErr: "PROXY"},
		10: {in: "PROXY TCP6 192.0.2.1 198.51.100.2 1 2\r\n", wantErr: "PROXY"},
		11: {in: "PROXY TCP4 192.0.2.1 198.51.100.2 65536 2\r\n", wantErr: "PROXY"},
		12: {in: "PROXY TCP4 192.0.2.1 198.51.100.2 01 2\r\n", wantErr: "PROXY"},
		13: {in: "PROXY TCP4 192.0.2.1 198.51.100.2 +1 2\r\n", wantErr: "PROXY"},
		14: {in: "PROXY UDP4 192.0.2.1 198.51.100.2 1 2\r\n", wantErr: "PROXY"},
		15: {in: "PROXY TCP4 192.0.2.1 198.51.100.2 1\r\n", wantErr: "PROXY"},
		16: {in: "PROXY " + strings.Repeat("A", 200), wantErr: "PROXY"},
		17: {in: "PROXY TCP6 fe80::1%eth0 2001:db8::2 1 2\r\n", wantErr: "PROXY"},
		18: {in: string(proxyV2(1, 0x11, v2addr4([4]byte{192, 0, 2, 9}, [4]byte{10, 0, 0, 1}, 1234, 80))) + "POST", src: "192.0.2.9:1234", n: 28},
		19: {in: string(proxyV2(1, 0x21, v6)), src: "[2001:db8::1]:4242", n: 52},
		20: {in: string(proxyV2(0, 0x00, nil)), n: 16},
		21: {in: string(proxyV2(0, 0x11, v2addr4([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 1, 2))), n: 28},
		22: {in: string(proxyV2(1, 0x11, append(v2addr4([4]byte{192, 0, 2, 9}, [4]byte{10, 0, 0, 1}, 1, 2), 0x04, 0, 1, 'x'))), src: "192.0.2.9:1", n: 32}, // a TLV
		23: {in: string(proxyV2(1, 0x11, []byte{1, 2, 3})), wantErr: "PROXY"},
		24: {in: string(proxyV2(1, 0x12, v2addr4([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 1, 2))), wantErr: "PROXY"}, // UDP
		25: {in: string(proxyV2(2, 0x11, v2addr4([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 1, 2))), wantErr: "PROXY"}, // bad command
		26: {in: string(proxyV2Sig[:7]), n: 0},
		27: {in: "\r\n\r\nX", wantErr: "PROXY"},
		28: {in: string(proxyV2(1, 0x11, make([]byte, proxyV2Max))), wantErr: "PROXY"},
		29: {in: string(proxyV2(1, 0x11, v2addr4([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 1, 2)))[:20], n: 0},
	} {
		h, n, err := parseProxy([]byte(v.in))
		if v.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), v.wantErr) {
				t.Errorf("%d: err %v, want %q", i, err, v.wantErr)
			}
			continue
		}
		if err != nil || n != v.n {
			t.Errorf("%d: n=%d err=%v, want n=%d", i, n, err, v.n)
			continue
		}
		if n == 0 {
			continue
		}
		if got := ""; !h.local {
			got = h.src.String()
			if got != v.src {
				t.Errorf("%d: src %s, want %s", i, got, v.src)
			}
		} else if v.src != "" {
			t.Errorf("%d: local, want %s", i, v.src)
		}
		// Every prefix of a complete header asks for more (or fails the
		// same way): a header split across reads parses the same.
		for k := 0; k < n; k++ {
			if _, m, err := parseProxy([]byte(v.in[:k])); m != 0 || err != nil {
				t.Errorf("%d: prefix %d: n=%d err=%v", i, k, m, err)
			}
		}
	}
}

// dialProxied opens a connection and sends header first.
func dialProxied(t *testing.T, h *harness, header string) *client {
	t.Helper()
	c := h.dial(t)
	if header != "" {
		c.write([]byte(header))
	}
	return c
}

// TestTrustedProxyLimits: behind a trusted proxy the per-IP limit counts
// the clients its PROXY headers name, not the proxy (E7); a trusted
// connection without a header is closed and counted; untrusted peers are
// limited as before.
func TestTrustedProxyLimits(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		cfg := Config{MaxConnsPerIP: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		h := startHarness(t, fe, cfg, defaultOptions())
		ok := func(c *client) {
			t.Helper()
			resp, _ := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
		}
		// Five connections from the proxy, for five clients: all served,
		// more than MaxConnsPerIP from one address.
		var open []*client
		for i := range 5 {
			c := dialProxied(t, h, "PROXY TCP4 192.0.2."+string(rune('1'+i))+" 127.0.0.1 5000 80\r\n")
			ok(c)
			open = append(open, c)
		}
		// One client through the proxy, twice: fine; a third: 429.
		a := dialProxied(t, h, string(proxyV2(1, 0x11, v2addr4([4]byte{198, 51, 100, 7}, [4]byte{127, 0, 0, 1}, 1, 80))))
		ok(a)
		b := dialProxied(t, h, "PROXY TCP4 198.51.100.7 127.0.0.1 2 80\r\n")
		ok(b)
		c := dialProxied(t, h, "PROXY TCP4 198.51.100.7 127.0.0.1 3 80\r\n")
		c.write(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("third connection of one client: %v %v", resp, err)
		}
		if !c.closedByServer(2 * time.Second) {
			t.Error("refused connection left open")
		}
		if got := h.srv.Stats().TooManyConnsPerIP.Load(); got != 1 {
			t.Errorf("TooManyConnsPerIP = %d", got)
		}
		// Its slot is given back on close.
		a.conn.Close()
		deadline := time.Now().Add(2 * time.Second)
		for {
			d := dialProxied(t, h, "PROXY TCP4 198.51.100.7 127.0.0.1 4 80\r\n")
			d.write(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))
			resp, err := d.readResponse(5 * time.Second)
			if err == nil && resp.StatusCode == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("slot not given back: %v %v", resp, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// LOCAL (a health check) is served and charged to nobody.
		ok(dialProxied(t, h, string(proxyV2(0, 0, nil))))
		// No header from a trusted proxy: never served (at most a 400),
		// closed, counted.
		bad := dialProxied(t, h, "")
		bad.write(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))
		if r, err := bad.readResponse(2 * time.Second); err == nil && r.StatusCode != 400 {
			t.Fatalf("request without a PROXY header answered %d", r.StatusCode)
		}
		if !bad.closedByServer(2 * time.Second) {
			t.Error("connection without a PROXY header left open")
		}
		if got := h.srv.Stats().BadProxyHeader.Load(); got != 1 {
			t.Errorf("BadProxyHeader = %d", got)
		}
		for _, c := range open {
			ok(c) // keep-alive requests after the header still work
		}
	})
}

// TestUntrustedProxyHeader: a PROXY header from a peer not in
// TrustedProxies is not honoured: the request is malformed HTTP.
func TestUntrustedProxyHeader(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}, defaultOptions())
		c := dialProxied(t, h, "PROXY TCP4 203.0.113.1 127.0.0.1 1 80\r\n")
		c.write(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))
		resp, err := c.readResponse(5 * time.Second)
		if err == nil && resp.StatusCode == 200 {
			t.Fatal("an untrusted PROXY header was honoured")
		}
		if h.srv.Stats().Proxied.Load() != 0 {
			t.Error("counted as proxied")
		}
	})
}

// TestProxyConnRemoteAddr: the connection reports the client as its remote
// address, and bytes read with the header reach the server.
func TestProxyConnRemoteAddr(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	l := &limitListener{s: &Server{cfg: Config{MaxConnsPerIP: 4}}, perIP: map[string]int{}}
	lc := &limitConn{l: l, stats: &l.s.stats}
	p := &proxyConn{Conn: b, lc: lc}
	lc.Conn = p
	go func() { _, _ = a.Write([]byte("PROXY TCP6 2001:db8::5 ::1 7 8\r\nHELLO")) }()
	buf := make([]byte, 16)
	n, err := p.Read(buf)
	if err != nil || !bytes.Equal(buf[:n], []byte("HELLO")) {
		t.Fatalf("read %q %v", buf[:n], err)
	}
	if got := p.RemoteAddr().String(); got != "[2001:db8::5]:7" {
		t.Fatalf("RemoteAddr %s", got)
	}
	if lc.ip == "" || l.perIP[lc.ip] != 1 {
		t.Fatalf("not charged: %q %v", lc.ip, l.perIP)
	}
}
