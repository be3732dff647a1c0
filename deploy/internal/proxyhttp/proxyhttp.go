// Package proxyhttp is an HTTP client that talks to an mcpwire replica the
// way HAProxy's send-proxy does: every connection starts with a PROXY
// protocol v1 header. The replicas of deploy/ trust 127.0.0.1 as a proxy
// (--trusted-proxy), so the cluster test and benchmark reach them directly
// with it.
package proxyhttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
)

// Client returns a client whose connections begin with "PROXY TCP4
// 127.0.0.1 127.0.0.1 <local port> 80", keeping up to maxIdle idle
// connections per host.
func Client(maxIdle int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: maxIdle,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			la := conn.LocalAddr().(*net.TCPAddr)
			if _, err := fmt.Fprintf(conn, "PROXY TCP4 127.0.0.1 127.0.0.1 %d 80\r\n", la.Port); err != nil {
				conn.Close()
				return nil, err
			}
			return conn, nil
		},
	}}
}
