//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package streamhttp

import "net"

// probeConn cannot look at a connection here: idle connections are used
// unprobed (a stale one costs the request ErrNotDelivered).
func probeConn(net.Conn) probeResult { return probeUnknown }
