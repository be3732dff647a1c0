//go:build windows

package socket

import (
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/windows"
)

// setUmask does nothing on Windows (no umask; Config.UnixMode is ignored).
func setUmask(int) (restore func()) { return func() {} }

// chmodSocket does nothing on Windows.
func chmodSocket(string, os.FileMode) error { return nil }

// dupListenerAddr returns the local address of fd, a duplicate of a
// listener's handle (gnet makes it with DuplicateHandle, so CloseHandle
// releases it), and closes fd; nil when the system does not say.
func dupListenerAddr(fd int) net.Addr {
	h := windows.Handle(fd)
	defer windows.CloseHandle(h)
	sa, err := windows.Getsockname(h)
	if err != nil {
		return nil
	}
	switch a := sa.(type) {
	case *windows.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *windows.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	case *windows.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return nil
}

// writeGuard bounds one blocking write by Config.WriteTimeout.
//
// gnet's Windows backend keeps no outbound buffer: Conn.Write is a plain
// blocking write on the event loop's goroutine and OutboundBuffered is
// always 0. The write-progress deadline of the Unix systems (watchStall)
// therefore never arms, and a peer that stops reading would hold the loop,
// and every connection on it, for good. Here a timer runs while a write
// is in progress instead; when it fires first, the socket's pending I/O is
// cancelled (CancelIoEx, which the Go runtime reports as a failed write),
// so the write returns an error and the connection is closed, counted as
// a write timeout and a slow consumer as on the other systems.
type writeGuard struct {
	mu       sync.Mutex
	writing  bool           // a write is in progress: h is open
	deadline time.Time      // when that write times out
	h        windows.Handle // the connection's socket
	timer    *time.Timer
}

// write hands b to gnet, which writes it before returning (see
// writeGuard). It runs on the event loop only, where the connection is
// closed, so the socket handle stays open while a write is in progress.
func (g *writeGuard) write(c *conn, b []byte) (int, error) {
	timeout := c.s.cfg.WriteTimeout
	if timeout < 0 {
		return c.gc.Write(b)
	}
	g.mu.Lock()
	if g.timer == nil {
		fd := c.gc.Fd()
		if fd < 0 { // closed: gnet's Write says so
			g.mu.Unlock()
			return c.gc.Write(b)
		}
		g.h = windows.Handle(fd)
		g.timer = time.AfterFunc(timeout, func() { g.expired(c) })
	} else {
		g.timer.Reset(timeout)
	}
	g.writing, g.deadline = true, time.Now().Add(timeout)
	g.mu.Unlock()

	n, err := c.gc.Write(b)

	g.mu.Lock()
	g.writing = false
	g.timer.Stop()
	g.mu.Unlock()
	return n, err
}

// expired runs on the timer's goroutine: it cancels the write in progress
// when it is past its deadline. A timer that fired for an earlier write,
// just as that write ended, finds either no write or a later deadline and
// does nothing.
func (g *writeGuard) expired(c *conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.writing || time.Now().Before(g.deadline) {
		return
	}
	g.writing = false // cancel once
	c.s.stats.WriteTimeouts.Add(1)
	c.s.eng.Stats().SlowConsumers.Add(1)
	c.s.log.Warn("closing a connection whose write did not complete in time", "remote", addrString(c.remote), "timeout", c.s.cfg.WriteTimeout)
	// Every pending operation on the socket ends, the reader's too: the
	// connection is closed either way.
	_ = windows.CancelIoEx(g.h, nil)
}
