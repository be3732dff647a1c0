//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package streamhttp

import (
	"crypto/tls"
	"net"
	"syscall"
)

// probeConn looks, without blocking and without consuming anything,
// whether an idle connection has bytes or its end waiting (MSG_PEEK).
func probeConn(nc net.Conn) probeResult {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return probeUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return probeEOF
	}
	var buf [1]byte
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // one attempt, no wait
	}); err != nil {
		return probeEOF
	}
	switch {
	case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
		return probeIdle
	case rerr != nil || n == 0:
		return probeEOF
	}
	return probeData
}
