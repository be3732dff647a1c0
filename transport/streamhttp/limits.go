package streamhttp

import (
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// limitListener enforces Config.MaxConnsPerIP (429) and Config.MaxConns
// (503) at accept time, before any per-connection state is allocated
// (C11), and counts each refusal. It replaces fasthttp's own per-IP limit,
// whose connection wrapper would hide the socket from the disconnect
// watcher.
type limitListener struct {
	net.Listener
	s       *Server
	mu      sync.Mutex
	perIP   map[string]int
	total   int
	netHTTP bool // for net/http (NetListener): connections are netConns
}

var (
	resp429 = []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	resp503 = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
)

func (l *limitListener) Accept() (net.Conn, error) {
	if l.s.tlsErr != nil {
		return nil, l.s.tlsErr // NetListener with an unusable Config.TLS
	}
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		// A trusted proxy's connection is charged to the client its PROXY
		// header names, once the header is read (proxyproto.go).
		proxied := l.s.trusted(c.RemoteAddr())
		ip := ""
		if !proxied {
			ip = remoteIP(c)
		}
		l.mu.Lock()
		var refuse []byte
		switch {
		case l.total >= l.s.cfg.MaxConns:
			refuse = resp503
			l.s.stats.TooManyConns.Add(1)
		case !proxied && l.perIP[ip] >= l.s.cfg.MaxConnsPerIP:
			refuse = resp429
			l.s.stats.TooManyConnsPerIP.Add(1)
		default:
			l.total++
			l.s.gauges.conns.Add(1)
			if !proxied {
				l.perIP[ip]++
			}
		}
		l.mu.Unlock()
		if refuse != nil {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write(refuse)
			_ = c.Close()
			continue
		}
		cfg := &l.s.cfg
		peer := ""
		if _, tcp := c.RemoteAddr().(*net.TCPAddr); tcp {
			peer = callerKey(ip)
		}
		lc := &limitConn{Conn: c, l: l, ip: ip, peer: peer, stats: &l.s.stats, clk: &l.s.clk,
			readTO: cfg.ReadTimeout, idleTO: cfg.IdleTimeout, gapTO: cfg.ReadIdleTimeout}
		lc.coarse = min(lc.readTO, lc.idleTO, lc.gapTO) >= coarseMinLimit()
		if proxied {
			l.s.stats.Proxied.Add(1)
			lc.Conn = &proxyConn{Conn: c, lc: lc}
		}
		lc.info = l.s.scope.ConnOpen(c.LocalAddr(), c.RemoteAddr())
		if l.netHTTP {
			nc := &netConn{limitConn: lc, maxHeader: l.s.cfg.MaxHeaderBytes}
			if l.s.tlsConf != nil {
				nc.tc = &tlsConn{Conn: tls.Server(lc.Conn, l.s.tlsConf), lc: lc}
			}
			return nc, nil
		}
		if l.s.tlsConf != nil {
			return &tlsConn{Conn: tls.Server(lc, l.s.tlsConf), lc: lc}, nil
		}
		return lc, nil
	}
}

func (l *limitListener) release(c *limitConn) {
	l.mu.Lock()
	l.total--
	l.s.gauges.conns.Add(-1)
	if ip := c.ip; ip != "" {
		if n := l.perIP[ip] - 1; n > 0 {
			l.perIP[ip] = n
		} else {
			delete(l.perIP, ip)
		}
	}
	l.mu.Unlock()
}

// chargeClient charges a proxied connection to the client ip its PROXY
// header names; false (counted) when that client is at MaxConnsPerIP.
func (l *limitListener) chargeClient(c *limitConn, ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[ip] >= l.s.cfg.MaxConnsPerIP {
		l.s.stats.TooManyConnsPerIP.Add(1)
		return false
	}
	l.perIP[ip]++
	c.ip, c.peer = ip, callerKey(ip)
	return true
}

// callerKey is what names an anonymous caller of this connection for the
// engine's per-caller limits (engine.Request.SetLimitKey): its client IP,
// except a loopback one, which names no caller — the operator's own
// tools, or a reverse proxy on the host that brings every client from one
// address (list it in Config.TrustedProxies so that the PROXY header's
// client counts instead). ip is the address's raw 4 or 16 bytes; anything
// else (a Unix socket's peer) names no caller either.
func callerKey(ip string) string {
	a, ok := netip.AddrFromSlice([]byte(ip))
	if !ok || a.Unmap().IsLoopback() {
		return ""
	}
	return ip
}

// textCallerKey is callerKey for an address in text form.
func textCallerKey(host string) string { return netutil.CallerIP(host, false) }

func remoteIP(c net.Conn) string {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return string(ta.IP.To16())
	}
	return c.RemoteAddr().String()
}

// limitConn gives its slot back on Close, keeps the socket reachable
// (syscall.Conn) for the disconnect watcher, and owns the connection's read
// deadlines: fasthttp is configured without ReadTimeout and IdleTimeout, so
// the per-request deadline work is done here, once per read, instead of by
// two SetReadDeadline calls per request.
type limitConn struct {
	net.Conn
	l    *limitListener
	ip   string           // the per-IP slot this connection holds ("": none); guarded by l.mu
	peer string           // callerKey(ip): set with ip, read by the connection's own goroutine
	info *engine.ConnInfo // for the engine's hooks (nil without)
	once sync.Once

	rcOnce sync.Once
	rc     syscall.RawConn
	rcErr  error

	wdl atomic.Int64 // the socket's write deadline, Unix ns (0: none)

	// Read side: the goroutine serving the connection, and the disconnect
	// watcher while the handler runs.
	readTO, idleTO, gapTO time.Duration // Config.ReadTimeout, IdleTimeout, ReadIdleTimeout
	stats                 *Stats
	clk                   *coarseClock
	coarse                bool // the read limits are long enough for clk (coarseMinLimit)

	// The last Origin and Host values a request on this connection was
	// let through with (Server.originAllowed, hostAllowed; nil: none):
	// the reading goroutine's, like served.
	originOK, hostOK []byte

	// served, inReq and reqStart belong to the goroutine that reads (Read,
	// requestRead; a hijack hands the connection over with a new
	// goroutine). The deadline as noted (sockRD, rdKind) and manual are
	// atomics, read by Read without a lock: the disconnect watcher sets
	// the deadline from its own goroutine, under rmu like every change of
	// the socket's read deadline, so that the socket's deadline and the
	// note agree. A keep-alive request then takes no lock in Read.
	rmu      sync.Mutex
	manual   atomic.Bool   // the connection was hijacked: deadlines are the owner's (SetReadDeadline)
	served   bool          // a request has reached the handler: waits between requests are keep-alive waits
	inReq    bool          // bytes of a request have been read, its handler has not run yet
	reqStart time.Duration // monoNow when the current request began (0: not yet noted, see Read)
	sockRD   atomic.Int64  // the read deadline on the socket, as a monoNow reading (0: none)
	rdKind   atomic.Uint32 // what sockRD bounds (rdIdle, rdRequest, rdGap)
}

// What the socket's read deadline bounds.
const (
	rdNone    uint32 = iota
	rdIdle           // the wait for a request (IdleTimeout, or ReadTimeout on a new connection)
	rdRequest        // the whole request (ReadTimeout)
	rdGap            // the wait between two reads of one request (ReadIdleTimeout, C2)
)

// Read applies the deadline the connection's state calls for, then reads:
//
//   - waiting for a request: IdleTimeout on a kept-alive connection,
//     ReadTimeout on a new one;
//   - inside a request: ReadTimeout from its start, and ReadIdleTimeout
//     (C2) from now, whichever comes first.
//
// A request starts with its first bytes after the previous handler ran
// (requestRead ends it). Its start is noted at the next read, not when the
// bytes arrive: a request that arrives in one read, as nearly all do, then
// costs one clock reading in all, and none with limits long enough for
// the server's coarse clock (the defaults are). The socket's deadline is
// left alone when it is at most a sixteenth of the limit earlier than
// wanted, so keep-alive requests normally touch no timer.
func (c *limitConn) Read(p []byte) (int, error) {
	manual := c.manual.Load()
	if !manual {
		var r *coarseReading // the coarse clock's reading (its mono, inlined)
		if c.coarse {
			r = c.clk.t.Load()
		}
		var now time.Duration // a monoNow reading
		if r != nil {
			now = r.mono
		} else {
			now = monoNow()
		}
		// The usual read, the wait for a keep-alive request whose
		// deadline is still close enough, is told here without a call:
		// applyReadDeadline's first case and test, which it then skips.
		if c.inReq || !c.served || !c.idleKept(now) {
			c.applyReadDeadline(now)
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 && !c.inReq && !manual {
		c.inReq, c.reqStart = true, 0
	}
	if err != nil && c.rdKind.Load() == rdGap && isTimeout(err) {
		c.stats.ReadIdleTimeouts.Add(1)
	}
	return n, err
}

// applyReadDeadline sets the read deadline for the connection's state at
// now (a monoNow reading).
func (c *limitConn) applyReadDeadline(now time.Duration) {
	var want time.Duration
	var kind uint32
	var limit time.Duration
	switch {
	case !c.inReq && c.served:
		want, kind, limit = now+c.idleTO, rdIdle, c.idleTO
	case !c.inReq:
		want, kind, limit = now+c.readTO, rdIdle, c.readTO
	default:
		if c.reqStart == 0 {
			c.reqStart = now
		}
		want, kind, limit = c.reqStart+c.readTO, rdRequest, c.readTO
		if g := now + c.gapTO; g < want {
			want, kind, limit = g, rdGap, c.gapTO
		}
	}
	if kept(c.sockRD.Load(), want, limit) {
		return
	}
	c.rmu.Lock()
	c.sockRD.Store(int64(want))
	c.rdKind.Store(kind)
	_ = c.Conn.SetReadDeadline(monoEpoch.Add(want))
	c.rmu.Unlock()
}

// kept reports whether sockRD, the read deadline on the socket (a monoNow
// reading, 0: none), may stay for a deadline of want under limit: an
// earlier deadline than wanted is kept while it is close enough (a
// sixteenth of the limit); never a later one.
func kept(sockRD int64, want, limit time.Duration) bool {
	cur := time.Duration(sockRD)
	return cur != 0 && cur <= want && want-cur <= limit/16
}

// idleKept is applyReadDeadline's test for a keep-alive wait (a request
// served, the next not begun) at now: the deadline on the socket stays.
func (c *limitConn) idleKept(now time.Duration) bool {
	return kept(c.sockRD.Load(), now+c.idleTO, c.idleTO)
}

// requestRead is called when fasthttp hands a request to the handler: its
// bytes are all read, and the next read waits for the next request.
func (c *limitConn) requestRead() {
	c.inReq, c.served = false, true
}

// hijacked hands the connection's read deadlines to its new owner (a
// listen stream): Read then applies none of its own.
func (c *limitConn) hijacked() {
	c.manual.Store(true)
}

// SetReadDeadline sets the socket's read deadline at once (the disconnect
// watcher wakes its wait this way). While the connection is served by
// fasthttp the next Read puts back the deadline its state calls for.
func (c *limitConn) SetReadDeadline(t time.Time) error {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	var at int64
	if !t.IsZero() {
		if at = int64(t.Sub(monoEpoch)); at == 0 {
			at = 1 // 0 means none
		}
	}
	c.sockRD.Store(at)
	c.rdKind.Store(rdNone)
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline is SetReadDeadline and SetWriteDeadline.
func (c *limitConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetWriteDeadline sets the socket's write deadline and notes it for
// refreshWriteDeadline.
func (c *limitConn) SetWriteDeadline(t time.Time) error {
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	c.wdl.Store(ns)
	return c.Conn.SetWriteDeadline(t)
}

// responseWriteTimeout bounds writing one JSON response.
const responseWriteTimeout = 30 * time.Second

// refreshWriteDeadline keeps a write deadline of about
// responseWriteTimeout ahead of the coarse clock's reading (or of time.Now when it is halted),
// touching the connection only when less than responseWriteTimeout-1s is
// left. Called by the goroutine serving the connection (one request at a
// time).
func (c *limitConn) refreshWriteDeadline() {
	if p, ok := c.writeKept(); !ok {
		c.moveWriteDeadline(p)
	}
}

// writeKept is refreshWriteDeadline's test, small enough to be inlined
// where a response is sent: ok when the write deadline needs no move at
// p, the coarse clock's reading (by the reading's Unix time, kept with
// it). With the clock halted p is nil and ok false.
func (c *limitConn) writeKept() (p *coarseReading, ok bool) {
	p = c.clk.t.Load()
	return p, p != nil && !c.writeDue(p.unix)
}

// moveWriteDeadline is refreshWriteDeadline's move when writeKept says
// no: from p, the coarse clock's reading the deadline was found due at,
// or (p nil: the clock is halted) from time.Now, if due then.
func (c *limitConn) moveWriteDeadline(p *coarseReading) {
	if p != nil {
		_ = c.SetWriteDeadline(p.t.Add(responseWriteTimeout))
		return
	}
	if now := time.Now(); c.writeDue(now.UnixNano()) {
		_ = c.SetWriteDeadline(now.Add(responseWriteTimeout))
	}
}

// writeDue reports whether the write deadline needs moving at now (Unix
// ns): none set, or less than responseWriteTimeout-1s left.
func (c *limitConn) writeDue(now int64) bool {
	d := c.wdl.Load()
	return d == 0 || time.Duration(d-now) < responseWriteTimeout-time.Second
}

func (c *limitConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// release gives the connection's slot back and ends it for the hooks,
// once, whichever layer (plain or TLS) closes it.
func (c *limitConn) release() {
	c.once.Do(func() {
		c.l.release(c)
		c.l.s.scope.ConnClose(c.info, nil)
	})
}

var errNoSyscallConn = errors.New("streamhttp: connection has no file descriptor")

// SyscallConn returns the socket's RawConn, created once per connection
// (the standard library allocates one per call).
func (c *limitConn) SyscallConn() (syscall.RawConn, error) {
	c.rcOnce.Do(func() {
		if sc, ok := c.Conn.(syscall.Conn); ok {
			c.rc, c.rcErr = sc.SyscallConn()
		} else {
			c.rcErr = errNoSyscallConn
		}
	})
	return c.rc, c.rcErr
}
