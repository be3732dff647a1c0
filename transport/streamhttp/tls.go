package streamhttp

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// TLS on both front ends. The TLS layer sits above the connection limits
// and the PROXY protocol reader and below HTTP:
//
//	socket → proxyConn (trusted balancers) → limitConn (slots, read deadlines) → tls.Conn → HTTP
//
// so a connection is counted and its handshake is bounded by ReadTimeout
// (on a new connection the wait for its first bytes) and ReadIdleTimeout
// (between two reads of the handshake and of the first request), before
// any certificate work. ALPN offers http/1.1, never h2: HTTP/2 is not served.

// ErrPlaintext is returned by Listen and Serve for a non-loopback address
// without Config.TLS, unless Config.InsecurePlaintext says plain HTTP is
// meant (a TLS-terminating balancer in front, a private network).
var ErrPlaintext = errors.New("streamhttp: refusing plain HTTP on a non-loopback listener without TLS or InsecurePlaintext")

// errNoCertificate is returned by Serve when Config.TLS can serve no
// certificate.
var errNoCertificate = errors.New("streamhttp: Config.TLS has no Certificates, GetCertificate or GetConfigForClient")

// serverTLS is the transport's copy of Config.TLS: ALPN offers http/1.1
// and never h2 (HTTP/2 is not served), other protocols of NextProtos are
// kept (acme-tls/1 for ACME's TLS-ALPN-01 challenge), and TLS 1.2 is the
// minimum unless MinVersion says otherwise.
func serverTLS(c *tls.Config) (*tls.Config, error) {
	if c == nil {
		return nil, nil
	}
	if len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil {
		return nil, errNoCertificate
	}
	c = c.Clone()
	protos := []string{"http/1.1"}
	for _, p := range c.NextProtos {
		if p != "h2" && p != "h2c" && p != "http/1.1" {
			protos = append(protos, p)
		}
	}
	c.NextProtos = protos
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	return c, nil
}

// tlsConn is a server-side TLS connection over a limitConn. It keeps the
// limitConn reachable (deadline bookkeeping, hijack, the disconnect
// watcher's socket) and answers a plain HTTP request sent to the TLS port
// with a plain 400 instead of a silent close.
type tlsConn struct {
	*tls.Conn
	lc     *limitConn
	failed bool // the handshake failed: reads end quietly
}

// Handshake runs the TLS handshake (fasthttp calls it before the first
// read; a plain Read would too).
func (c *tlsConn) Handshake() error {
	err := c.Conn.Handshake()
	if err != nil && !c.failed {
		c.failed = true
		handshakeFailed(err, c.lc.Conn, c.lc.stats)
	}
	return err
}

// Read ends with io.EOF after a failed handshake, so that fasthttp closes
// the connection without answering it through a TLS layer that has none.
func (c *tlsConn) Read(p []byte) (int, error) {
	if c.failed {
		return 0, io.EOF
	}
	n, err := c.Conn.Read(p)
	if err != nil && !c.failed && !c.ConnectionState().HandshakeComplete {
		c.failed = true
		handshakeFailed(err, c.lc.Conn, c.lc.stats)
		return 0, io.EOF
	}
	return n, err
}

// Close gives the connection's slot back before TLS sends its closing
// alert: a client that reads the alert and dials again at once finds its
// slot free (per-IP and total limits), as it would over plain HTTP, where
// the slot is given back before the socket closes.
func (c *tlsConn) Close() error {
	c.lc.release()
	return c.Conn.Close()
}

// SyscallConn exposes the socket to the disconnect watcher.
func (c *tlsConn) SyscallConn() (syscall.RawConn, error) { return c.lc.SyscallConn() }

// limitOf returns the limitConn under a connection fasthttp serves.
func limitOf(c net.Conn) *limitConn {
	switch c := c.(type) {
	case *limitConn:
		return c
	case *tlsConn:
		return c.lc
	}
	return nil
}

// respPlainOnTLS is the answer to plain HTTP on a TLS port.
var respPlainOnTLS = []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 38\r\nConnection: close\r\n\r\nThis server speaks HTTPS (TLS) only.\r\n")

// handshakeFailed counts a failed handshake; when the client spoke plain
// HTTP it answers 400 in plain HTTP (what it can read) on raw, the
// connection under TLS. A client that went away before finishing the
// handshake is not counted.
func handshakeFailed(err error, raw net.Conn, st *Stats) {
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) && rhe.Conn != nil && looksLikeHTTP(rhe.RecordHeader[:]) {
		st.PlainOnTLS.Add(1)
		_ = raw.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = raw.Write(respPlainOnTLS)
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) {
		return
	}
	st.TLSHandshakeErrors.Add(1)
}

// looksLikeHTTP reports whether the five bytes read as a TLS record header
// begin an HTTP/1.x request line instead.
func looksLikeHTTP(h []byte) bool {
	for _, m := range []string{"GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH", "CONNE", "TRACE"} {
		if bytes.Equal(h, []byte(m)) {
			return true
		}
	}
	return false
}
