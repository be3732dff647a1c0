// Package netutil holds the small network helpers the transports share.
package netutil

import (
	"net"
	"net/netip"
	"strings"
)

// IsLoopback reports whether addr ("host:port", or a bare host) names a
// loopback address: localhost, 127.0.0.0/8 or ::1 (SEC-04).
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}
