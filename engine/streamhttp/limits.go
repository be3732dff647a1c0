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
	s     *Server
	mu    sync.Mutex
	perIP map[string]int
	total int
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
		return &limitConn{Conn: c, l: l, ip: ip}, nil
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
