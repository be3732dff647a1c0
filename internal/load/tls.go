package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// HTTPS. An https:// target is driven over crypto/tls connections, each
// read by its own goroutine (the HTTP relay's pollers read plain sockets:
// a TLS record must be decrypted by the connection that owns the session
// before the response parser can see a byte). The handshake happens when
// a connection opens, before the clock starts for the run's first
// connections; the connections share a session cache, so a connection
// opened again after the server closed one resumes its session (one
// round trip, no certificate) as an SDK's client would.

// clientTLS is the run's copy of conf for target t (conf nil: the system
// roots): ServerName from the target's host unless set, a shared session
// cache unless conf has one, TLS 1.2 at least, and ALPN http/1.1 unless
// NextProtos says otherwise (the generator speaks HTTP/1.1 only).
func clientTLS(conf *tls.Config, t *target) *tls.Config {
	if conf == nil {
		conf = &tls.Config{}
	}
	c := conf.Clone()
	if c.ServerName == "" {
		host, _, err := net.SplitHostPort(t.addr)
		if err != nil {
			host = t.addr
		}
		c.ServerName = host
	}
	if c.ClientSessionCache == nil {
		// Keyed by server name: every connection resumes from the
		// newest ticket.
		c.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	if len(c.NextProtos) == 0 {
		c.NextProtos = []string{"http/1.1"}
	}
	return c
}

// dialHTTP connects to addr within timeout: TCP, then the TLS handshake
// when conf is set. A failed handshake says so (an unknown certificate
// authority reads "x509: certificate signed by unknown authority").
func dialHTTP(addr string, conf *tls.Config, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if conf == nil {
		return d.Dial("tcp", addr)
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(nc, conf)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, &tlsError{addr: addr, err: err}
	}
	return tc, nil
}

// tlsError is a failed TLS handshake.
type tlsError struct {
	addr string
	err  error
}

func (e *tlsError) Error() string { return fmt.Sprintf("TLS handshake with %s: %v", e.addr, e.err) }
func (e *tlsError) Unwrap() error { return e.err }

// Timeout makes a handshake that ran out of time count as a timeout.
func (e *tlsError) Timeout() bool {
	ne, ok := e.err.(net.Error)
	return ok && ne.Timeout()
}

// Temporary is false: a refused certificate does not heal on its own.
func (e *tlsError) Temporary() bool { return false }
