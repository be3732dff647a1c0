package streamhttp

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
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
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c)
		l.mu.Lock()
		var refuse []byte
		switch {
		case l.total >= l.s.cfg.MaxConns:
			refuse = resp503
			l.s.stats.TooManyConns.Add(1)
		case l.perIP[ip] >= l.s.cfg.MaxConnsPerIP:
			refuse = resp429
			l.s.stats.TooManyConnsPerIP.Add(1)
		default:
			l.total++
			l.perIP[ip]++
		}
		l.mu.Unlock()
		if refuse != nil {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write(refuse)
			_ = c.Close()
			continue
		}
		lc := &limitConn{Conn: c, l: l, ip: ip, idle: l.s.cfg.ReadIdleTimeout, stats: &l.s.stats}
		if l.netHTTP {
			return &netConn{limitConn: lc, maxHeader: l.s.cfg.MaxHeaderBytes}, nil
		}
		return lc, nil
	}
}

func (l *limitListener) release(ip string) {
	l.mu.Lock()
	l.total--
	if n := l.perIP[ip] - 1; n > 0 {
		l.perIP[ip] = n
	} else {
		delete(l.perIP, ip)
	}
	l.mu.Unlock()
}

func remoteIP(c net.Conn) string {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return string(ta.IP.To16())
	}
	return c.RemoteAddr().String()
}

// limitConn gives its slot back on Close and keeps the socket reachable
// (syscall.Conn) for the disconnect watcher.
type limitConn struct {
	net.Conn
	l    *limitListener
	ip   string
	once sync.Once

	rcOnce sync.Once
	rc     syscall.RawConn
	rcErr  error

	wdl time.Time // write deadline last set by refreshWriteDeadline

	// Read side: the goroutine serving the connection, and the disconnect
	// watcher while the handler runs (rmu orders them).
	idle   time.Duration // Config.ReadIdleTimeout
	stats  *Stats
	rmu    sync.Mutex
	inReq  bool      // bytes of a request have been read, its handler has not run yet
	userRD time.Time // the read deadline fasthttp (or the watcher) asked for
	sockRD time.Time // the read deadline set on the socket
	idleRD bool      // sockRD is the idle limit, earlier than userRD
}

// SetReadDeadline records the deadline fasthttp asks for (ReadTimeout,
// IdleTimeout) and applies the earlier of it and the idle limit.
func (c *limitConn) SetReadDeadline(t time.Time) error {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.userRD = t
	return c.applyReadDeadline(time.Now(), true)
}

// Read enforces ReadIdleTimeout between the reads of one request (C2)
// without touching the socket's deadline on every read: it moves only when
// it has come within min(1 s, idle/2) of the limit, so a request that keeps
// arriving costs a clock read per read. A request starts with its first
// byte after the previous handler ran (see requestRead).
func (c *limitConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	if c.inReq {
		_ = c.applyReadDeadline(time.Now(), false)
	}
	c.rmu.Unlock()
	n, err := c.Conn.Read(p)
	c.rmu.Lock()
	if n > 0 && !c.inReq {
		c.inReq = true
		_ = c.applyReadDeadline(time.Now(), true)
	}
	idle := c.idleRD
	c.rmu.Unlock()
	if err != nil && idle && isTimeout(err) {
		c.stats.ReadIdleTimeouts.Add(1)
	}
	return n, err
}

// requestRead is called when fasthttp hands a request to the handler: its
// bytes are all read, and the idle limit no longer applies until the next
// request begins.
func (c *limitConn) requestRead() {
	// The socket keeps its idle deadline for now: fasthttp sets its own
	// (IdleTimeout) before it waits for the next request, and that call
	// drops the idle limit (see SetReadDeadline).
	c.rmu.Lock()
	c.inReq = false
	c.rmu.Unlock()
}

// applyReadDeadline sets the socket's read deadline to the earlier of
// fasthttp's and, inside a request, now+idle. Without force it touches the
// socket only when the idle limit has come close. Called with rmu held.
func (c *limitConn) applyReadDeadline(now time.Time, force bool) error {
	want, idle := c.userRD, false
	if c.inReq && c.idle > 0 {
		if w := now.Add(c.idle); want.IsZero() || w.Before(want) {
			want, idle = w, true
		}
	}
	if !force && (!c.idleRD || c.sockRD.Sub(now) >= c.idle-min(time.Second, c.idle/2)) {
		return nil
	}
	if want.Equal(c.sockRD) && idle == c.idleRD {
		return nil
	}
	c.sockRD, c.idleRD = want, idle
	return c.Conn.SetReadDeadline(want)
}

// responseWriteTimeout bounds writing one JSON response.
const responseWriteTimeout = 30 * time.Second

// refreshWriteDeadline keeps a write deadline of about
// responseWriteTimeout ahead, touching the connection only when less than
// responseWriteTimeout-1s is left. Called by the goroutine serving the
// connection (one request at a time).
func (c *limitConn) refreshWriteDeadline(now time.Time) {
	if c.wdl.Sub(now) < responseWriteTimeout-time.Second {
		c.wdl = now.Add(responseWriteTimeout)
		_ = c.Conn.SetWriteDeadline(c.wdl)
	}
}

func (c *limitConn) Close() error {
	c.once.Do(func() { c.l.release(c.ip) })
	return c.Conn.Close()
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
