// Package replayconn is an in-memory net.Conn for benchmarks that measure a
// server alone: it hands the server one request over and over, with no
// client and no socket, and counts the responses.
package replayconn

import (
	"errors"
	"io"
	"net"
	"time"
)

// Addr is the address both ends of a Conn report.
var Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}

// Conn hands out Req on each Read, N times (then io.EOF), and expects one
// response (Write) in between. It is used by one server goroutine at a
// time; read its fields after Finished is closed.
type Conn struct {
	Req   []byte
	N     int
	Done  int    // responses written
	First []byte // the first response
	// Finished is closed when the server closes the connection.
	Finished chan struct{}
	pending  bool
}

// New returns a Conn that serves req n times.
func New(req []byte, n int) *Conn {
	return &Conn{Req: req, N: n, Finished: make(chan struct{})}
}

func (c *Conn) Read(p []byte) (int, error) {
	switch {
	case c.Done >= c.N:
		return 0, io.EOF
	case c.pending:
		return 0, errors.New("replayconn: read before the response was written")
	}
	c.pending = true
	return copy(p, c.Req), nil
}

func (c *Conn) Write(p []byte) (int, error) {
	c.pending = false
	c.Done++
	if c.Done == 1 {
		c.First = append(c.First[:0], p...)
	}
	return len(p), nil
}

// Close closes Finished (once).
func (c *Conn) Close() error {
	select {
	case <-c.Finished:
	default:
		close(c.Finished)
	}
	return nil
}

func (c *Conn) LocalAddr() net.Addr              { return Addr }
func (c *Conn) RemoteAddr() net.Addr             { return Addr }
func (c *Conn) SetDeadline(time.Time) error      { return nil }
func (c *Conn) SetReadDeadline(time.Time) error  { return nil }
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }
