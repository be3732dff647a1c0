package socket

import (
	"context"
	"io"
	"net"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// Dialer returns a mcpclient.Dialer for a TCP ("tcp", "host:port") or Unix
// ("unix", "/path") socket served with the line framing (CUST-04). Use it
// with client.NewLineTransport, which re-dials after the connection is lost
// and re-sends listen streams (STD-14 rules, CUST-04).
func Dialer(network, addr string, timeout time.Duration) mcpclient.Dialer {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		d := net.Dialer{Timeout: timeout}
		return d.DialContext(ctx, network, addr)
	}
}
