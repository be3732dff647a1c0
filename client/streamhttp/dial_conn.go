package streamhttp

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/internal/httpwire"
)

// dialReadBuf is the read buffer of one client connection: response heads
// and chunk lines must fit in it (httpwire.ErrLineTooLong otherwise).
const dialReadBuf = 16 << 10

// dialWriteKeep: a request buffer grown past this is dropped after use.
const dialWriteKeep = 64 << 10

// dialProbeIdle: a connection idle for longer is checked for a close by
// the server before it carries a request (a peek that does not block),
// which spares most requests a stale connection. A variable for tests.
var dialProbeIdle = time.Second

// wconn is one client connection. The goroutine that holds it (an
// exchange, a call, the HTTP+SSE reader) is the only one to touch its
// buffers; close may come from anywhere (a cancellation, Close).
type wconn struct {
	p    *connPool
	nc   net.Conn
	tls  bool
	br   httpwire.Reader
	h    httpwire.Head
	body httpwire.Body
	sse  httpwire.SSEParser
	env  codec.Envelope
	wbuf []byte // request being written
	name []byte // Mcp-Name source bytes
	used int    // requests carried
	idle time.Time

	// authz is the Authorization value of the request being written
	// (Config.Auth); "" for none.
	authz string
	dpop  string // its DPoP proof

	dead atomic.Bool
}

func newWconn(p *connPool, nc net.Conn, isTLS bool) *wconn {
	c := &wconn{p: p, nc: nc, tls: isTLS}
	c.br.Reset(nc, make([]byte, dialReadBuf))
	return c
}

// close closes the connection once and gives its place in the pool back.
// Safe from any goroutine; the buffers are left to the holder (and the
// garbage collector).
func (c *wconn) close() {
	if c.dead.CompareAndSwap(false, true) {
		_ = c.nc.Close()
		if c.p != nil {
			c.p.release(c)
		}
	}
}

// begin starts a request on the connection.
func (c *wconn) begin() {
	c.used++
	c.br.Got = 0
}

// reusable reports whether the connection can carry another request once
// the response just read is complete: keep-alive, no stray bytes after it.
func (c *wconn) reusable() bool {
	return !c.h.Close && c.body.Reusable() && c.br.Err == nil && c.br.Buffered() == 0 && !c.dead.Load()
}

// Results of probeConn.
type probeResult uint8

const (
	probeUnknown probeResult = iota // not supported here
	probeIdle                       // nothing waiting: alive
	probeData                       // bytes waiting
	probeEOF                        // closed by the peer (or failed)
)

// stale reports whether a connection idle since c.idle was closed by the
// server, or (plain HTTP) sent something unasked, while it waited. Only
// connections idle for dialProbeIdle or longer are looked at.
func (c *wconn) stale(now time.Time) bool {
	if now.Sub(c.idle) < dialProbeIdle {
		return false
	}
	switch probeConn(c.nc) {
	case probeEOF:
		return true
	case probeData:
		return !c.tls // TLS: a session ticket, perhaps; the TLS layer reads it
	}
	return false
}

// nextEvent returns the data of the next event of an event-stream body
// (aliasing the parser: valid until the next call), io.EOF at the end of
// the body, or client.ErrTooLarge when one event exceeds max bytes
// (max < 0: no bound). It reads from the connection as needed.
func (c *wconn) nextEvent(max int64) ([]byte, error) {
	for {
		if d, ok := c.sse.Next(); ok {
			if max >= 0 && int64(len(d)) > max {
				return nil, mcpclient.ErrTooLarge
			}
			return d, nil
		}
		if max >= 0 && int64(c.sse.Pending()) > max {
			return nil, mcpclient.ErrTooLarge
		}
		seg, err := c.body.Next()
		if err != nil {
			return nil, err
		}
		c.sse.Push(seg)
	}
}

// readBody reads the rest of a body into a new slice of at most max bytes
// (max < 0: no bound); past it, it returns the bytes read so far (at
// least the first statusBodyMax) and client.ErrTooLarge.
func (c *wconn) readBody(max int64) ([]byte, error) {
	var msg []byte
	if n := c.h.Length; n >= 0 && !c.h.NoBody && !c.h.Chunked {
		if max >= 0 && n > max {
			return c.readPrefix(), mcpclient.ErrTooLarge
		}
		msg = make([]byte, 0, n)
	}
	for {
		seg, err := c.body.Next()
		if err == io.EOF {
			return msg, nil
		}
		if err != nil {
			return msg, err
		}
		if max >= 0 && int64(len(msg)+len(seg)) > max {
			if len(msg) < statusBodyMax {
				msg = append(msg, seg[:min(len(seg), statusBodyMax-len(msg))]...)
			}
			return msg, mcpclient.ErrTooLarge
		}
		msg = append(msg, seg...)
	}
}

// readPrefix reads up to statusBodyMax bytes of the body (for a
// StatusError); errors end it quietly.
func (c *wconn) readPrefix() []byte {
	var b []byte
	for len(b) < statusBodyMax {
		seg, err := c.body.Next()
		if err != nil {
			break
		}
		b = append(b, seg[:min(len(seg), statusBodyMax-len(b))]...)
	}
	return b
}

// drainBuffered finishes the body with the bytes already buffered, without
// reading (after the response of an event stream, events that follow are
// dropped). It reports whether the body ended there.
func (c *wconn) drainBuffered() bool {
	if !c.body.Reusable() || c.h.Close {
		return false
	}
	c.br.Push = true
	defer func() { c.br.Push = false }()
	for range 1 << 10 {
		_, err := c.body.Next()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

// connPool holds the connections to one origin: idle keep-alive ones
// (last in, first out) and a count of all open ones, bounded by max
// (max <= 0: no bound). Lock order: a leaf (nothing is called while
// holding mu but channel sends to waiters, which never block).
type connPool struct {
	t       *transport
	mu      sync.Mutex
	idle    []*wconn
	all     map[*wconn]struct{}
	open    int // connections open or being dialled
	max     int
	waiters []chan *wconn // nil sent: a place to dial into
	closed  bool
}

// get returns a connection for one request: an idle one (reused true) or
// a new one. A failed dial wraps client.ErrNotDelivered.
func (p *connPool) get(ctx context.Context) (c *wconn, reused bool, err error) {
	var stale []*wconn
	defer func() {
		for _, s := range stale {
			s.close()
		}
	}()
	now := time.Now()
	idleMax := p.t.opts.IdleTimeout
	p.mu.Lock()
	for len(p.idle) > 0 {
		c = p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		if (idleMax > 0 && now.Sub(c.idle) > idleMax) || c.dead.Load() {
			stale = append(stale, c)
			continue
		}
		p.mu.Unlock()
		if c.stale(now) {
			stale = append(stale, c)
			p.mu.Lock()
			continue
		}
		return c, true, nil
	}
	if p.closed {
		p.mu.Unlock()
		return nil, false, mcpclient.ErrClosed
	}
	if p.max <= 0 || p.open < p.max {
		p.open++
		p.mu.Unlock()
		c, err = p.dial(ctx)
		return c, false, err
	}
	ch := make(chan *wconn, 1)
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()
	select {
	case c := <-ch:
		if c != nil {
			return c, true, nil
		}
		c, err = p.dial(ctx)
		return c, false, err
	case <-ctx.Done():
		err = ctx.Err()
	case <-p.t.done:
		err = mcpclient.ErrClosed
	}
	p.mu.Lock()
	for i, w := range p.waiters {
		if w == ch {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			p.mu.Unlock()
			return nil, false, err
		}
	}
	p.mu.Unlock()
	// Handed something meanwhile: pass it on.
	if c := <-ch; c != nil {
		p.put(c)
	} else {
		p.giveBack()
	}
	return nil, false, err
}

// dial opens a connection into a place already counted in open.
func (p *connPool) dial(ctx context.Context) (*wconn, error) {
	c, err := p.t.connect(ctx)
	if err != nil {
		p.giveBack()
		return nil, wrapNotDelivered("connect", err)
	}
	c.p = p
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close()
		return nil, mcpclient.ErrClosed
	}
	p.all[c] = struct{}{}
	p.mu.Unlock()
	return c, nil
}

// connect opens a TCP (and TLS) connection to the server.
func (t *transport) connect(ctx context.Context) (c *wconn, err error) {
	if d := t.opts.DialTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	nc, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	if t.tlsConf != nil {
		tc := tls.Client(nc, t.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	return newWconn(nil, nc, t.tlsConf != nil), nil
}

// put returns a connection whose response is complete: to a waiter, or to
// the idle list.
func (p *connPool) put(c *wconn) {
	if c.dead.Load() {
		return
	}
	c.idle = time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close()
		return
	}
	if len(p.waiters) > 0 {
		ch := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		ch <- c // capacity 1, one send per waiter
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// release forgets a closed connection and frees its place (wconn.close).
func (p *connPool) release(c *wconn) {
	p.mu.Lock()
	delete(p.all, c)
	for i, x := range p.idle {
		if x == c {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	p.giveBack()
}

// giveBack frees one place: a waiter gets it to dial into.
func (p *connPool) giveBack() {
	p.mu.Lock()
	if len(p.waiters) > 0 && !p.closed {
		ch := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		ch <- nil
		return
	}
	p.open--
	p.mu.Unlock()
}

// close closes every connection, idle or busy (their exchanges then fail
// with client.ErrClosed).
func (p *connPool) close() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*wconn, 0, len(p.all))
	for c := range p.all {
		conns = append(conns, c)
	}
	p.idle = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
