//go:build unix

package streamhttp

import (
	"net"
	"testing"
)

// TestRawConnOfOnlySockets: a listen stream writes from the publisher only
// on a bare TCP or Unix socket. Any other connection under the listener's
// limitConn (here a pipe; in production the PROXY-protocol reader behind
// HAProxy) gets no raw socket, and must not panic: the first version took
// a typed nil *net.TCPConn for a socket and crashed every replica of the
// multi-replica test on its first listen stream.
func TestRawConnOfOnlySockets(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if rawConnOf(&limitConn{Conn: a}) != nil || rawConnOf(a) != nil {
		t.Fatal("a pipe has no raw socket")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rawConnOf(&limitConn{Conn: c}) == nil || rawConnOf(c) == nil {
		t.Fatal("a TCP connection, bare or under limitConn, is a raw socket")
	}
}
