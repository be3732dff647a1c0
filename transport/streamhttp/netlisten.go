package streamhttp

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// NetListener wraps ln for an http.Server that serves Handler, so that the
// net/http adapter keeps the guarantees the fasthttp front end has on its
// own:
//
//   - Config.MaxConnsPerIP and Config.MaxConns (C11): a connection past
//     either is answered 429 or 503 and closed before net/http sees it, and
//     counted (Stats.TooManyConnsPerIP, Stats.TooManyConns).
//   - Config.ReadIdleTimeout (C2): inside a request, a wait between two
//     reads past it ends the request: 408 for a body, a close for a
//     header block, counted (Stats.ReadIdleTimeouts). net/http bounds
//     only the whole request (the http.Server's ReadTimeout).
//   - A request with both Content-Length and Transfer-Encoding (B5) is
//     refused with 400 and the connection closed. net/http resolves such a
//     request by its chunked framing and drops the Content-Length before a
//     handler can see it, so the connection reads each request's header
//     block as it arrives and tells the handler; set the server's
//     ConnContext to Server.ConnContext for that.
//
// Without them the adapter still closes the connection after any request
// with a Transfer-Encoding (RFC 9112 §6.1), so nothing can be smuggled
// behind it, and the connection limits are the embedding server's.
func (s *Server) NetListener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, s: s, perIP: map[string]int{}, netHTTP: true}
}

type netConnKey struct{}

// ConnContext is an http.Server ConnContext hook for connections accepted
// by NetListener (others pass through unchanged).
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if nc, ok := c.(*netConn); ok {
		return context.WithValue(ctx, netConnKey{}, nc)
	}
	return ctx
}

// netConn is a limitConn for net/http: it scans each request's header
// block as net/http reads it (B5) and leaves deadlines to net/http.
type netConn struct {
	*limitConn
	maxHeader int
	sc        framingScan

	// tc is the TLS layer over limitConn.Conn when Config.TLS is set: the
	// scan sees the requests' plain bytes. net/http sees no *tls.Conn, so
	// it neither negotiates HTTP/2 nor fills Request.TLS.
	tc *tlsConn

	served  atomic.Int64 // requests handed to the handler so far
	suspect atomic.Int64 // 1-based index of a request with both framings, 0 if none

	// The between-reads limit inside a request (ReadIdleTimeout, C2):
	// net/http bounds a whole request (ReadTimeout) but not the wait
	// between two of its reads, so Read sets the socket's deadline to now
	// + ReadIdleTimeout while the scan is inside a header block or a
	// Content-Length body, and gives net/http's own deadline back after.
	dmu     sync.Mutex
	httpRD  time.Time   // the read deadline net/http set last
	gapOn   bool        // the socket's deadline is the between-reads one
	gapSeen atomic.Bool // a read ended at the between-reads limit
}

// Read passes the bytes through and scans them; it never changes them.
// Inside a request it bounds the wait for the bytes by ReadIdleTimeout.
func (c *netConn) Read(p []byte) (int, error) {
	var n int
	var err error
	gap := c.applyGap()
	if c.tc != nil {
		// After a failed handshake: io.EOF, net/http closes quietly (a
		// plain HTTP client has had its 400).
		n, err = c.tc.Read(p)
	} else {
		n, err = c.limitConn.Conn.Read(p)
	}
	if n > 0 && !c.sc.done {
		if k := c.sc.feed(p[:n], c.maxHeader); k > 0 {
			c.suspect.Store(k)
		}
	}
	if gap && err != nil && isTimeout(err) && c.gapSeen.CompareAndSwap(false, true) {
		// Once per connection: it is closed after (net/http may read
		// what is left of the body once more before it closes).
		c.stats.ReadIdleTimeouts.Add(1)
	}
	return n, err
}

// applyGap sets the socket's read deadline for the next read: now +
// ReadIdleTimeout inside a request when that comes before net/http's own
// deadline, net/http's otherwise. It reports whether the between-reads
// deadline is the one set. Only the reading goroutine scans, so the scan's
// state needs no lock.
func (c *netConn) applyGap() bool {
	inReq := !c.sc.done && (len(c.sc.head) > 0 || c.sc.skip > 0)
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if inReq && c.gapTO > 0 {
		g := time.Now().Add(c.gapTO)
		if c.httpRD.IsZero() || g.Before(c.httpRD) {
			c.gapOn = true
			_ = c.limitConn.Conn.SetReadDeadline(g)
			return true
		}
	}
	if c.gapOn {
		c.gapOn = false
		_ = c.limitConn.Conn.SetReadDeadline(c.httpRD)
	}
	return false
}

// SetReadDeadline is net/http's: it is kept for applyGap and passed on.
func (c *netConn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.httpRD, c.gapOn = t, false
	return c.limitConn.Conn.SetReadDeadline(t)
}

// SetDeadline is SetReadDeadline and SetWriteDeadline.
func (c *netConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// Write goes through TLS when it is on.
func (c *netConn) Write(p []byte) (int, error) {
	if c.tc != nil {
		return c.tc.Write(p)
	}
	return c.limitConn.Conn.Write(p)
}

// Close gives the slot back and closes the connection (with a TLS
// close_notify when TLS is on).
func (c *netConn) Close() error {
	if c.tc == nil {
		return c.limitConn.Close()
	}
	c.limitConn.release()
	return c.tc.Close()
}

// smuggled is called by the handler once per request, in order; it reports
// whether this request carried both Content-Length and Transfer-Encoding.
func (c *netConn) smuggled() bool {
	k := c.served.Add(1)
	return c.suspect.Load() == k
}

// framingScan follows the request framing of an HTTP/1.1 byte stream far
// enough to see each header block: it collects the block (up to the header
// limit), notes Content-Length and Transfer-Encoding, and skips a
// Content-Length body to the next block. It stops at the first request
// with a Transfer-Encoding — after it the connection is closed (see
// NetListener) — or when a block is over the limit (net/http refuses it).
type framingScan struct {
	head []byte // the current header block so far
	skip int64  // body bytes still to pass over
	n    int64  // header blocks seen
	done bool
}

// feed scans b; it returns the 1-based index of a request carrying both
// Content-Length and Transfer-Encoding, or 0.
func (f *framingScan) feed(b []byte, maxHeader int) int64 {
	for len(b) > 0 && !f.done {
		if f.skip > 0 {
			k := min(int64(len(b)), f.skip)
			f.skip -= k
			b = b[k:]
			continue
		}
		if len(f.head) == 0 {
			for len(b) > 0 && (b[0] == '\r' || b[0] == '\n') { // CRLF before a request line is ignored
				b = b[1:]
			}
			if len(b) == 0 {
				break
			}
		}
		end := -1
		// The block ends at an empty line: "\r\n\r\n" or "\n\n" (net/http
		// accepts bare LF line ends).
		old := len(f.head)
		start := max(0, old-3)
		f.head = append(f.head, b...)
		if i := bytes.Index(f.head[start:], []byte("\n\r\n")); i >= 0 {
			end = start + i + 3
		}
		if i := bytes.Index(f.head[start:], []byte("\n\n")); i >= 0 && (end < 0 || start+i+2 < end) {
			end = start + i + 2
		}
		if end < 0 {
			if len(f.head) > maxHeader+4 {
				f.stop()
			}
			b = nil
			continue
		}
		rest := b[end-old:] // the block ends in b: it did not end earlier
		f.n++
		cl, te, clv := headerFraming(f.head[:end])
		switch {
		case cl && te:
			f.stop()
			return f.n
		case te:
			f.stop()
			return 0
		case cl:
			f.skip = clv
		}
		// What followed the block belongs to its body or the next request.
		b = rest
		f.head = f.head[:0]
	}
	return 0
}

func (f *framingScan) stop() {
	f.done = true
	f.head = nil
}

// headerFraming reports whether a header block has Content-Length and
// Transfer-Encoding lines, and the (last) Content-Length value.
func headerFraming(block []byte) (cl, te bool, n int64) {
	lines := bytes.Split(block, []byte("\n"))
	for _, l := range lines[1:] { // the request line first
		name, v, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		name = trimOWS(name)
		switch {
		case equalFold(name, "content-length"):
			cl = true
			if x, err := strconv.ParseInt(string(trimOWS(bytes.TrimRight(v, "\r"))), 10, 64); err == nil && x >= 0 {
				n = x
			}
		case equalFold(name, "transfer-encoding"):
			te = true
		}
	}
	return cl, te, n
}
