//go:build linux

package load

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
)

// canPoll: relay and inline connections to sockets are read by pollers
// (below).
const canPoll = true

// A poller reads many connections from one goroutine: inline stream
// connections (TCP or Unix sockets in a closed loop, see stream.go) and
// HTTP connections of a closed loop (httprelay.go). It uses epoll
// (level-triggered) on sockets the generator dialled itself, outside Go's
// network poller, one read per ready socket, and writes the requests that
// replace the answered ones from the same goroutine. A batch of requests
// then costs one write, one read and a share of an epoll_wait; no
// goroutine is parked or woken per batch, and no read returns EAGAIN.
// The sockets stay in blocking mode: a socket is read only when epoll says
// it is readable; a write blocks only while the server does not read, like
// a Writer over a net.Conn (an inline window fits in the socket buffers,
// so that wait is short).
type poller struct {
	epfd  int
	ef    *os.File        // epfd, registered with Go's network poller
	rc    syscall.RawConn // to wait for epfd to be readable
	evfd  int             // eventfd: wakes the loop to stop it
	buf   []byte
	mu    sync.Mutex
	conns map[int32]pollConn // by key (the event's data)
	done  chan struct{}
}

// pollConn is a connection a poller reads.
type pollConn interface {
	// readable is called on the poller's goroutine when the socket has
	// bytes to read or has ended.
	readable(p *poller, env *codec.Envelope)
	// failed ends the connection when the poller itself fails.
	failed(p *poller, err error)
}

// pollerFor returns the poller of connection i. The run's pollers start on
// first use: one for every two CPUs the generator may use (it shares the
// machine with the server), at least one.
func (r *run) pollerFor(i int) (*poller, error) {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	if r.pollers == nil {
		n := max(1, min(runtime.GOMAXPROCS(0)/2, r.cfg.Conns))
		for range n {
			p, err := newPoller()
			if err != nil {
				r.stopPollersLocked()
				return nil, err
			}
			r.pollers = append(r.pollers, p)
		}
	}
	return r.pollers[i%len(r.pollers)], nil
}

// stopPollers ends the pollers' goroutines (after every connection ended).
func (r *run) stopPollers() {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	r.stopPollersLocked()
}

func (r *run) stopPollersLocked() {
	for _, p := range r.pollers {
		var one = [8]byte{1}
		_, _ = unix.Write(p.evfd, one[:])
		<-p.done
	}
	r.pollers = nil
}

func newPoller() (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}); err != nil {
		unix.Close(epfd)
		unix.Close(evfd)
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	// Non-blocking, so that os.NewFile hands it to the network poller.
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		unix.Close(evfd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	ef := os.NewFile(uintptr(epfd), "epoll")
	rc, err := ef.SyscallConn()
	if err != nil {
		ef.Close()
		unix.Close(evfd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	p := &poller{epfd: epfd, ef: ef, rc: rc, evfd: evfd, buf: make([]byte, framing.DefaultReadSize),
		conns: map[int32]pollConn{}, done: make(chan struct{})}
	go p.loop()
	return p, nil
}

// add starts reading fd, which belongs to pc, under key (unique in the
// run: a stream connection's index, httpKeyBase + an HTTP worker's).
func (p *poller) add(key int32, fd *fdConn, pc pollConn) error {
	p.mu.Lock()
	p.conns[key] = pc
	p.mu.Unlock()
	err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd.fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: key})
	if err != nil {
		p.mu.Lock()
		delete(p.conns, key)
		p.mu.Unlock()
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// remove stops reading fd (called by the connection's owner while the
// poller runs).
func (p *poller) remove(key int32, fd *fdConn) {
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd.fd, nil)
	p.mu.Lock()
	delete(p.conns, key)
	p.mu.Unlock()
}

func (p *poller) loop() {
	defer close(p.done)
	defer p.ef.Close()
	defer unix.Close(p.evfd)
	events := make([]unix.EpollEvent, 128)
	var env codec.Envelope
	var n int
	var werr error
	wait := func(fd uintptr) bool {
		for {
			n, werr = unix.EpollWait(int(fd), events, 0)
			if werr != unix.EINTR {
				return n > 0 || werr != nil
			}
		}
	}
	for {
		err := p.rc.Read(wait) // parks until epfd is readable when nothing is ready
		if err == nil {
			err = werr
		}
		if err != nil {
			// Nothing sensible is left to do: end every connection.
			p.mu.Lock()
			cs := make([]pollConn, 0, len(p.conns))
			for _, c := range p.conns {
				cs = append(cs, c)
			}
			p.mu.Unlock()
			for _, c := range cs {
				c.failed(p, fmt.Errorf("epoll_wait: %w", err))
			}
			return
		}
		for _, ev := range events[:n] {
			if ev.Fd == -1 {
				return // stop
			}
			p.mu.Lock()
			c := p.conns[ev.Fd]
			p.mu.Unlock()
			if c != nil {
				c.readable(p, &env)
			}
		}
	}
}

func (c *streamConn) readable(p *poller, env *codec.Envelope) { p.read(c, env) }
func (c *streamConn) failed(p *poller, err error)             { p.end(c, err) }

// read performs one read on c and handles every complete line it brings
// (then, inline, writes the requests replacing the answered ones at once).
func (p *poller) read(c *streamConn, env *codec.Envelope) {
	n, err := unix.Read(c.fd.fd, p.buf)
	if err == unix.EINTR || err == unix.EAGAIN {
		return
	}
	if n > 0 {
		c.r.bytesIn.Add(int64(n))
		c.dec.Feed(p.buf[:n])
		c.frames(env)
		return
	}
	if err == nil {
		err = io.EOF
	}
	c.ended.Store(true) // nothing more is sent on it
	c.dec.End()
	c.frames(env)
	p.end(c, err)
}

// end stops reading c, whose input ended with err.
func (p *poller) end(c *streamConn, err error) {
	p.remove(int32(c.idx), c.fd)
	c.readErr = err
	c.lost()
	c.dec.Release()
	close(c.dead)
}

// fdConn is a connected socket used with plain system calls.
type fdConn struct{ fd int }

// Write writes all of b (the socket is blocking).
func (f *fdConn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Write(f.fd, b[n:])
		if m > 0 {
			n += m
		}
		if err == unix.EINTR || err == nil && m == 0 {
			continue
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// read reads once into b.
func (f *fdConn) read(b []byte) (int, error) { return unix.Read(f.fd, b) }

// closeWrite half-closes the socket; closeBoth makes a pending read see
// the end at once (and a blocked write fail).
func (f *fdConn) closeWrite() error { return unix.Shutdown(f.fd, unix.SHUT_WR) }
func (f *fdConn) closeBoth() error  { return unix.Shutdown(f.fd, unix.SHUT_RDWR) }
func (f *fdConn) close() error      { return unix.Close(f.fd) }

// dialFD connects a blocking socket to addr ("tcp" host:port or "unix"
// path) within timeout, outside Go's network poller.
func dialFD(network, addr string, timeout time.Duration) (*fdConn, error) {
	var sa unix.Sockaddr
	family := unix.AF_UNIX
	switch network {
	case "unix":
		sa = &unix.SockaddrUnix{Name: addr}
	case "tcp":
		ta, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			return nil, err
		}
		if ip4 := ta.IP.To4(); ip4 != nil {
			s := &unix.SockaddrInet4{Port: ta.Port}
			copy(s.Addr[:], ip4)
			sa, family = s, unix.AF_INET
		} else {
			s := &unix.SockaddrInet6{Port: ta.Port}
			copy(s.Addr[:], ta.IP.To16())
			sa, family = s, unix.AF_INET6
		}
	default:
		return nil, fmt.Errorf("dial: network %q", network)
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	fail := func(err error) (*fdConn, error) {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	deadline := time.Now().Add(timeout)
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EAGAIN && err != unix.EINTR {
			break
		}
		// A Unix listener's backlog is full: try again shortly.
		if time.Now().After(deadline) {
			return fail(syscall.ETIMEDOUT)
		}
		time.Sleep(time.Millisecond)
	}
	if err == unix.EINPROGRESS {
		for {
			ms := int(time.Until(deadline) / time.Millisecond)
			if ms <= 0 {
				return fail(syscall.ETIMEDOUT)
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err = unix.Poll(pfd, ms); err == unix.EINTR {
				continue
			}
			if err != nil {
				return fail(err)
			}
			if pfd[0].Revents != 0 {
				break
			}
		}
		soErr, gerr := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if gerr != nil {
			return fail(gerr)
		}
		err = nil
		if soErr != 0 {
			err = syscall.Errno(soErr)
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		return fail(err)
	}
	if family != unix.AF_UNIX {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	return &fdConn{fd: fd}, nil
}

// fdReader reads a blocking socket in plain system calls (a reader
// goroutine of its own, see streamConn.blockingReads).
type fdReader struct{ f *fdConn }

func (r fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(r.f.fd, b)
		if err == unix.EINTR {
			continue
		}
		if n == 0 && err == nil {
			return 0, io.EOF
		}
		return max(n, 0), err
	}
}
