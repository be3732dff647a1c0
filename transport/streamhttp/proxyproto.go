package streamhttp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// PROXY protocol (HAProxy's send-proxy and send-proxy-v2), read from
// connections whose peer is in Config.TrustedProxies: the header names the
// client the balancer accepted, per connection and before any request,
// so the per-client-IP limit (C11, E7) counts clients rather than the
// balancer. Versions 1 (text) and 2 (binary) are both accepted; a trusted
// connection without a valid header is closed (Stats.BadProxyHeader). A
// LOCAL header (a balancer's own health check) keeps the balancer's
// address and counts against no client.
//
// Spec: https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt

const (
	proxyV1Max = 107  // longest v1 line, CRLF included (spec §2.1)
	proxyV2Max = 2048 // longest v2 header we accept (16 + addresses + TLVs)
)

var proxyV2Sig = []byte("\r\n\r\n\x00\r\nQUIT\n")

// errProxyHeader is the one error for every malformed, missing or oversized
// PROXY header.
var errProxyHeader = errors.New("streamhttp: bad PROXY protocol header")

// proxyHeader is a parsed PROXY header.
type proxyHeader struct {
	local bool           // LOCAL (v2) or UNKNOWN (v1): no client address
	src   netip.AddrPort // the client, when !local
}

// parseProxy parses a PROXY header at the start of b. It returns the
// header and its length, n == 0 with a nil error when b is a prefix of a
// header that may still be valid (read more), or errProxyHeader.
func parseProxy(b []byte) (proxyHeader, int, error) {
	if len(b) == 0 {
		return proxyHeader{}, 0, nil
	}
	if b[0] == proxyV2Sig[0] {
		return parseProxyV2(b)
	}
	return parseProxyV1(b)
}

func parseProxyV1(b []byte) (proxyHeader, int, error) {
	const prefix = "PROXY "
	if k := min(len(b), len(prefix)); string(b[:k]) != prefix[:k] {
		return proxyHeader{}, 0, errProxyHeader
	}
	end := bytes.Index(b[:min(len(b), proxyV1Max)], []byte("\r\n"))
	if end < 0 {
		if len(b) >= proxyV1Max || bytes.IndexByte(b, '\n') >= 0 {
			return proxyHeader{}, 0, errProxyHeader
		}
		return proxyHeader{}, 0, nil
	}
	line := string(b[len(prefix):end])
	n := end + 2
	f := splitSpaces(line)
	if len(f) == 0 {
		return proxyHeader{}, 0, errProxyHeader
	}
	switch f[0] {
	case "UNKNOWN": // the rest of the line is ignored (spec §2.1)
		return proxyHeader{local: true}, n, nil
	case "TCP4", "TCP6":
	default:
		return proxyHeader{}, 0, errProxyHeader
	}
	if len(f) != 5 {
		return proxyHeader{}, 0, errProxyHeader
	}
	src, err1 := netip.ParseAddr(f[1])
	dst, err2 := netip.ParseAddr(f[2])
	sport, err3 := parsePort(f[3])
	_, err4 := parsePort(f[4])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || src.Zone() != "" || dst.Zone() != "" {
		return proxyHeader{}, 0, errProxyHeader
	}
	if want4 := f[0] == "TCP4"; src.Is4() != want4 || dst.Is4() != want4 {
		return proxyHeader{}, 0, errProxyHeader
	}
	return proxyHeader{src: netip.AddrPortFrom(src, sport)}, n, nil
}

// splitSpaces splits on single spaces; empty fields (two spaces in a row,
// leading or trailing spaces) make the line invalid and yield nil.
func splitSpaces(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			if s == "" {
				return nil
			}
			return append(out, s)
		}
		if i == 0 {
			return nil
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// parsePort accepts 0..65535 in decimal without sign or leading zeros.
func parsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 || (len(s) > 1 && s[0] == '0') {
		return 0, errProxyHeader
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errProxyHeader
		}
	}
	v, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, errProxyHeader
	}
	return uint16(v), nil
}

func parseProxyV2(b []byte) (proxyHeader, int, error) {
	if k := min(len(b), len(proxyV2Sig)); !bytes.Equal(b[:k], proxyV2Sig[:k]) {
		return proxyHeader{}, 0, errProxyHeader
	}
	if len(b) < 16 {
		return proxyHeader{}, 0, nil
	}
	verCmd, fam := b[12], b[13]
	size := int(binary.BigEndian.Uint16(b[14:16]))
	if verCmd>>4 != 2 || 16+size > proxyV2Max {
		return proxyHeader{}, 0, errProxyHeader
	}
	if len(b) < 16+size {
		return proxyHeader{}, 0, nil
	}
	n := 16 + size
	addr := b[16:n]
	switch verCmd & 0xF {
	case 0: // LOCAL: health checks; the address block is ignored
		return proxyHeader{local: true}, n, nil
	case 1: // PROXY
	default:
		return proxyHeader{}, 0, errProxyHeader
	}
	switch fam {
	case 0x11: // TCP over IPv4
		if len(addr) < 12 {
			return proxyHeader{}, 0, errProxyHeader
		}
		ip := netip.AddrFrom4([4]byte(addr[0:4]))
		return proxyHeader{src: netip.AddrPortFrom(ip, binary.BigEndian.Uint16(addr[8:10]))}, n, nil
	case 0x21: // TCP over IPv6
		if len(addr) < 36 {
			return proxyHeader{}, 0, errProxyHeader
		}
		ip := netip.AddrFrom16([16]byte(addr[0:16]))
		return proxyHeader{src: netip.AddrPortFrom(ip, binary.BigEndian.Uint16(addr[32:34]))}, n, nil
	case 0x00: // UNSPEC
		return proxyHeader{local: true}, n, nil
	}
	// UDP and Unix families do not carry an HTTP client we can limit.
	return proxyHeader{}, 0, errProxyHeader
}

// trusted reports whether addr is in Config.TrustedProxies.
func (s *Server) trusted(addr net.Addr) bool {
	if len(s.cfg.TrustedProxies) == 0 {
		return false
	}
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// proxyConn reads the PROXY header of a connection from a trusted proxy
// before the first byte reaches the HTTP server, then charges the client
// it names to the per-IP limit. Reads are made by one goroutine at a time
// (the one serving the connection); RemoteAddr may be called by others.
type proxyConn struct {
	net.Conn
	lc      *limitConn
	done    bool
	err     error
	pending []byte // bytes read past the header
	client  atomic.Pointer[net.TCPAddr]
}

func (p *proxyConn) Read(b []byte) (int, error) {
	if !p.done {
		p.readHeader()
	}
	if p.err != nil {
		return 0, p.err
	}
	if len(p.pending) > 0 {
		n := copy(b, p.pending)
		p.pending = p.pending[n:]
		if len(p.pending) == 0 {
			p.pending = nil
		}
		return n, nil
	}
	return p.Conn.Read(b)
}

// readHeader reads and parses the header under the read deadline the
// caller set (limitConn: ReadTimeout on a new connection).
func (p *proxyConn) readHeader() {
	p.done = true
	buf := make([]byte, 0, 256)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := p.Conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		h, hn, perr := parseProxy(buf)
		if perr != nil {
			p.fail(errProxyHeader)
			return
		}
		if hn > 0 {
			if len(buf) > hn {
				p.pending = buf[hn:]
			}
			p.accept(h)
			return
		}
		if err != nil {
			if err == io.EOF && len(buf) > 0 {
				err = errProxyHeader // cut short; a bare connect-and-close is no bad header
			}
			p.fail(err)
			return
		}
	}
}

func (p *proxyConn) fail(err error) {
	p.err = err
	if errors.Is(err, errProxyHeader) {
		p.lc.stats.BadProxyHeader.Add(1)
	}
}

// accept notes the client and charges it to the per-IP limit; over the
// limit the connection is answered 429 and closed.
func (p *proxyConn) accept(h proxyHeader) {
	if h.local {
		return
	}
	ip := h.src.Addr().Unmap()
	p.client.Store(net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, h.src.Port())))
	if !p.lc.l.chargeClient(p.lc, string(ip.AsSlice())) {
		p.err = errTooManyPerIP
		_, _ = p.Conn.Write(resp429)
	}
}

var errTooManyPerIP = errors.New("streamhttp: too many connections from one client")

// RemoteAddr is the client named by the PROXY header, or the proxy's
// address before the header was read (or for a LOCAL header).
func (p *proxyConn) RemoteAddr() net.Addr {
	if a := p.client.Load(); a != nil {
		return a
	}
	return p.Conn.RemoteAddr()
}

// SyscallConn exposes the socket to the disconnect watcher.
func (p *proxyConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := p.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errNoSyscallConn
}
