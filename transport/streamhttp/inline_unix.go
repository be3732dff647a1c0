//go:build unix

package streamhttp

import (
	"net"
	"syscall"
)

// inlineWriter writes a listen stream's events from the publisher's
// goroutine, without blocking: one write(2) of what the socket takes at
// once. The fan-out profile (profiles/fanout-unique.*) showed the wake of
// the stream's pump goroutine — a channel send, a park, a select — costing
// a fifth of the server's CPU per delivery beside the write itself; a
// stream whose socket has room now takes its event with no goroutine
// switch, and only what the socket refuses goes to the queue and the pump.
type inlineWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // bound once to b, n, err: no closure per write
	b   []byte
	n   int
	err error
}

// rawConnOf is the socket under a plain (not TLS) hijacked connection,
// or nil.
func rawConnOf(c net.Conn) syscall.RawConn {
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	// Only the two socket types, matched by their concrete type: anything
	// else under limitConn (a PROXY-protocol reader, a test's wrapper) has
	// bytes of its own in front of the socket, and a typed nil pointer
	// held in the interface would not compare equal to nil.
	var sc syscall.Conn
	switch c := c.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

func (w *inlineWriter) bind(rc syscall.RawConn) {
	w.rc = rc
	if w.fn == nil {
		w.fn = func(fd uintptr) bool {
			w.n, w.err = syscall.Write(int(fd), w.b)
			return true // never wait for the socket: the pump does that
		}
	}
}

// try writes what of b the socket takes now and returns how much; an error
// (the peer left, the connection closed) counts as nothing written, and
// the pump's own write then meets it.
func (w *inlineWriter) try(b []byte) int {
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.fn)
	w.b = nil
	if err != nil || w.err != nil || w.n < 0 {
		return 0
	}
	return w.n
}
