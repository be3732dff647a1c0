package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/codec"
)

// Legacy eras of the client transport: the 2025-11-25 Streamable HTTP
// session (Mcp-Session-Id, COMPAT-07) and the 2024-11-05 HTTP+SSE
// transport (COMPAT-04), plus the connect hook that re-initializes after
// either was lost.

// dialHookTimeout bounds one reconnection: opening a lost HTTP+SSE stream
// and running the connect hook.
const dialHookTimeout = 30 * time.Second

var errStreamLost = errors.New("streamhttp: the HTTP+SSE stream is closed")

// gate holds requests back while a reconnection runs (a new HTTP+SSE
// stream, the connect hook's initialize); err is set before ch closes.
type gate struct {
	ch  chan struct{}
	err error
}

// SetConnectHook installs the hook run after a 2025-era session expired
// (404 to a request with Mcp-Session-Id) and after a lost HTTP+SSE stream
// was opened again. It runs on a goroutine of its own; requests other
// than Handshake ones wait for it.
func (t *transport) SetConnectHook(h mcpclient.ConnectHook) {
	if h == nil {
		t.hook.Store(nil)
		return
	}
	t.hook.Store(&h)
}

// SwitchEra moves the transport to era e. client.Era2024 opens the
// HTTP+SSE stream (GET, Accept: text/event-stream) and returns once its
// endpoint event arrived (COMPAT-04); its URI must be on the URL's origin.
// From then on each request is POSTed there and its messages come on the
// stream, by id (the response) or progressToken (progress); other
// notifications go to every open Listen exchange; server requests are
// ignored. A lost stream fails the exchanges waiting on it with
// client.ErrDropped and is opened again (then the connect hook runs) by
// the next request. Other eras close the stream. Only client.Era2025
// keeps an Mcp-Session-Id.
func (t *transport) SwitchEra(ctx context.Context, e mcpclient.Era) error {
	if t.closed.Load() {
		return mcpclient.ErrClosed
	}
	t.legacyMu.Lock()
	defer t.legacyMu.Unlock()
	if e == mcpclient.Era2024 {
		if s := t.legacy.Load(); s == nil || s.dead.Load() {
			s, err := t.dialLegacy(ctx)
			if err != nil {
				return err
			}
			if old := t.legacy.Swap(s); old != nil {
				old.close()
			}
		}
		t.session.Store(nil)
		t.era.Store(uint32(e))
		return nil
	}
	t.era.Store(uint32(e))
	if e != mcpclient.Era2025 {
		t.session.Store(nil)
	}
	if s := t.legacy.Swap(nil); s != nil {
		s.close()
	}
	return nil
}

// keepSession records the Mcp-Session-Id a 2025-era server sent; version
// is the revision of the request that got it ("" keeps the known one).
func (t *transport) keepSession(id, version string) {
	old := t.session.Load()
	if old != nil && old.id == id && (version == "" || old.version == version) {
		return
	}
	if version == "" && old != nil {
		version = old.version
	}
	t.session.Store(&session{id: id, version: version})
}

// sessionExpired forgets session s (a request that carried it got 404,
// COMPAT-07) and starts the connect hook, which initializes again.
func (t *transport) sessionExpired(s *session) {
	if t.session.CompareAndSwap(s, nil) {
		t.log.Debug("streamhttp: session expired", "session", s.id)
		t.reconnect(nil)
	}
}

// waitGate waits for a reconnection in progress.
func (t *transport) waitGate(ctx context.Context) error {
	g := t.gate.Load()
	if g == nil {
		return nil
	}
	select {
	case <-g.ch:
		return g.err
	case <-ctx.Done():
		return ctx.Err()
	case <-t.done:
		return mcpclient.ErrClosed
	}
}

// reconnect runs fn (when not nil) and then the connect hook on a
// goroutine of its own, unless a reconnection runs already; it returns
// the gate of the one that runs.
func (t *transport) reconnect(fn func(context.Context) error) *gate {
	g := &gate{ch: make(chan struct{})}
	for {
		if cur := t.gate.Load(); cur != nil {
			return cur
		}
		if t.gate.CompareAndSwap(nil, g) {
			break
		}
	}
	run := func() {
		ctx, cancel := context.WithTimeout(t.ctx, dialHookTimeout)
		defer cancel()
		if fn != nil {
			g.err = fn(ctx)
		}
		if g.err == nil {
			if h := t.hook.Load(); h != nil {
				if err := (*h)(ctx); err != nil {
					t.log.Warn("streamhttp: connect hook failed", "err", err)
				}
			}
		}
		t.gate.CompareAndSwap(g, nil)
		close(g.ch)
	}
	if !t.goBackground(run) {
		g.err = mcpclient.ErrClosed
		t.gate.CompareAndSwap(g, nil)
		close(g.ch)
	}
	return g
}

// legacyStream is the GET stream of the HTTP+SSE transport: every reply
// and server notification arrives on it; one goroutine reads it and hands
// each message to its exchange, by id (responses) or progressToken
// (progress); other notifications go to every open Listen exchange.
type legacyStream struct {
	t      *transport
	c      *wconn
	target string // request-target of the endpoint event's URI
	dead   atomic.Bool
	env    codec.Envelope // the reader's

	mu      sync.Mutex // a leaf: no exchange is entered while it is held
	byID    map[string]*legacyExchange
	byToken map[string]*legacyExchange
	listens map[*legacyExchange]struct{}
}

// dialLegacy opens the HTTP+SSE stream and waits for its endpoint event.
func (t *transport) dialLegacy(ctx context.Context) (*legacyStream, error) {
	authz, proof, err := t.authorization(ctx, "GET", "")
	if err != nil {
		return nil, err
	}
	c, err := t.connect(ctx)
	if err != nil {
		return nil, wrapNotDelivered("connect", err)
	}
	c.authz, c.dpop = authz, proof
	stop := context.AfterFunc(ctx, c.close)
	target, err := t.openStream(c)
	ok := stop()
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		c.close()
		if !ok && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	s := &legacyStream{
		t: t, c: c, target: target,
		byID:    make(map[string]*legacyExchange),
		byToken: make(map[string]*legacyExchange),
		listens: make(map[*legacyExchange]struct{}),
	}
	if !t.goBackground(s.run) {
		c.close()
		return nil, mcpclient.ErrClosed
	}
	return s, nil
}

// openStream sends the GET and reads up to the endpoint event.
func (t *transport) openStream(c *wconn) (string, error) {
	c.begin()
	b := append(c.wbuf[:0], "GET "...)
	b = append(b, t.target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n"...)
	b = append(b, t.extra...)
	if c.authz != "" {
		b = appendAuth(b, c)
	}
	c.wbuf = append(b, "\r\n"...)
	if err := c.write(nil); err != nil {
		return "", fmt.Errorf("streamhttp: HTTP+SSE stream: %w", err)
	}
	if err := c.br.ReadHead(&c.h); err != nil {
		return "", fmt.Errorf("streamhttp: HTTP+SSE stream: %w", headError(err, c, false))
	}
	c.body.Reset(&c.br, &c.h)
	if c.h.Status != 200 || !c.h.SSE {
		return "", statusError(c.h.Status, c.readPrefix())
	}
	c.sse.Types = true
	c.sse.Reset()
	for {
		d, err := c.nextEvent(t.maxMsg)
		if err != nil {
			if err == io.EOF {
				err = errStreamEnded
			}
			return "", fmt.Errorf("streamhttp: HTTP+SSE stream before its endpoint event: %w", err)
		}
		if string(c.sse.Event()) != "endpoint" {
			t.log.Debug("streamhttp: HTTP+SSE event before the endpoint event ignored", "event", string(c.sse.Event()))
			continue
		}
		return t.resolveEndpoint(strings.TrimSpace(string(d)))
	}
}

// resolveEndpoint resolves the endpoint event's URI against the URL. It
// must stay on the same origin: the requests carry Config.Header
// (credentials, often).
func (t *transport) resolveEndpoint(s string) (string, error) {
	ref, err := t.base.Parse(s)
	if err != nil {
		return "", badReply("HTTP+SSE endpoint %q: %w", s, err)
	}
	if !strings.EqualFold(ref.Scheme, t.base.Scheme) || !strings.EqualFold(ref.Host, t.base.Host) {
		return "", badReply("HTTP+SSE endpoint %q is not on the origin of %s", s, t.base.Redacted())
	}
	return ref.RequestURI(), nil
}

// redialLegacy replaces a lost HTTP+SSE stream (a reconnection's fn).
func (t *transport) redialLegacy(ctx context.Context) error {
	t.legacyMu.Lock()
	defer t.legacyMu.Unlock()
	if mcpclient.Era(t.era.Load()) != mcpclient.Era2024 {
		return wrapNotDelivered("HTTP+SSE", errStreamLost)
	}
	if s := t.legacy.Load(); s != nil && !s.dead.Load() {
		return nil
	}
	s, err := t.dialLegacy(ctx)
	if err != nil {
		if !errors.Is(err, mcpclient.ErrNotDelivered) {
			err = wrapNotDelivered("HTTP+SSE stream", err)
		}
		return err
	}
	if old := t.legacy.Swap(s); old != nil {
		old.close()
	}
	return nil
}

// legacyFor returns the live HTTP+SSE stream, opening it again (and
// running the connect hook) when it was lost. Handshake requests (the
// hook's own) do not wait for the hook.
func (t *transport) legacyFor(ctx context.Context, handshake bool) (*legacyStream, error) {
	for {
		if !handshake {
			if err := t.waitGate(ctx); err != nil {
				return nil, err
			}
		}
		if s := t.legacy.Load(); s != nil && !s.dead.Load() {
			return s, nil
		}
		if handshake {
			return nil, wrapNotDelivered("HTTP+SSE", errStreamLost)
		}
		g := t.reconnect(t.redialLegacy)
		select {
		case <-g.ch:
			if g.err != nil {
				return nil, g.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.done:
			return nil, mcpclient.ErrClosed
		}
	}
}

// postHead writes the head of a POST to the endpoint.
func (s *legacyStream) postHead(out *mcpclient.Outgoing) func([]byte, *wconn) []byte {
	t := s.t
	return func(b []byte, c *wconn) []byte {
		b = append(b, "POST "...)
		b = append(b, s.target...)
		b = append(b, " HTTP/1.1\r\nHost: "...)
		b = append(b, t.host...)
		b = append(b, "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
		return t.appendEnd(b, c, len(out.Body))
	}
}

// openLegacy registers an exchange on the stream, then POSTs the request
// to the endpoint: its reply arrives on the stream, perhaps before the
// POST's own reply.
func (t *transport) openLegacy(ctx context.Context, out *mcpclient.Outgoing) (mcpclient.Exchange, error) {
	s, err := t.legacyFor(ctx, out.Handshake)
	if err != nil {
		return nil, err
	}
	x := &legacyExchange{
		s: s, key: string(out.ID), tok: string(out.Token), id: out.ID, version: out.Version,
		handshake: out.Handshake, in: mcpclient.Inbox{Max: t.opts.MaxQueued, Overflow: mcpclient.OverflowFail},
	}
	if !s.register(x, out.Listen) {
		return nil, wrapNotDelivered("HTTP+SSE", errStreamLost)
	}
	status, body, err := t.call(ctx, "POST", s.target, s.postHead(out), out.Body, t.maxMsg)
	x.status = status
	if err != nil && !errors.Is(err, mcpclient.ErrTooLarge) {
		s.remove(x)
		return nil, err
	}
	// Some servers answer on the POST itself; a JSON-RPC response there is
	// the exchange's, whatever the status.
	if err == nil && len(body) > 0 && isResponseFor(body, out.ID, t.peek) {
		s.remove(x)
		x.in.Final(body)
		return x, nil
	}
	if !isStatusOK(status) {
		s.remove(x)
		return nil, statusError(status, body)
	}
	return x, nil
}

// isResponseFor reports whether msg is a response to the request with id.
func isResponseFor(msg, id []byte, o codec.PeekConfig) bool {
	var env codec.Envelope
	_ = codec.PeekWith(msg, &env, o)
	if env.Kind != codec.KindResponse {
		return false
	}
	if env.ID == nil {
		return env.HasError && (env.IDKind == codec.IDNone || env.IDKind == codec.IDNull)
	}
	return sameID(env.ID, id)
}

// register adds x; false when the stream has ended.
func (s *legacyStream) register(x *legacyExchange, listen bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		return false
	}
	s.byID[x.key] = x
	if x.tok != "" {
		s.byToken[x.tok] = x
	}
	if listen {
		s.listens[x] = struct{}{}
	}
	return true
}

// unlink forgets x (s.mu held).
func (s *legacyStream) unlink(x *legacyExchange) {
	if s.byID[x.key] == x {
		delete(s.byID, x.key)
	}
	if x.tok != "" && s.byToken[x.tok] == x {
		delete(s.byToken, x.tok)
	}
	delete(s.listens, x)
}

func (s *legacyStream) remove(x *legacyExchange) {
	s.mu.Lock()
	if s.byID != nil {
		s.unlink(x)
	}
	s.mu.Unlock()
}

// close ends the stream; its reader then fails every exchange.
func (s *legacyStream) close() { s.c.close() }

func (s *legacyStream) run() { s.end(s.read()) }

// read hands each message of the stream to its exchange until it ends.
func (s *legacyStream) read() error {
	c := s.c
	for {
		d, err := c.nextEvent(s.t.maxMsg)
		if err != nil {
			if err == io.EOF {
				return errStreamEnded
			}
			return err
		}
		if len(d) == 0 || string(c.sse.Event()) != "message" {
			continue
		}
		s.dispatch(d)
	}
}

// dispatch routes one message of the stream.
func (s *legacyStream) dispatch(d []byte) {
	env := &s.env
	_ = codec.PeekWith(d, env, s.t.peek)
	switch env.Kind {
	case codec.KindResponse:
		s.mu.Lock()
		x := s.byID[string(env.ID)]
		if x != nil {
			s.unlink(x)
		}
		s.mu.Unlock()
		if x == nil {
			s.t.log.Debug("streamhttp: HTTP+SSE response nobody waits for", "id", string(env.ID))
			return
		}
		x.in.Final(slices.Clone(d))
	case codec.KindNotification:
		var to []*legacyExchange
		s.mu.Lock()
		switch {
		case env.Method.EqualString("notifications/progress"):
			if tok, ok := codec.LookupPath(d, "params", "progressToken"); ok {
				if x := s.byToken[string(tok)]; x != nil {
					to = append(to, x)
				}
			}
		case env.Method.EqualString("notifications/cancelled"):
		default:
			for x := range s.listens {
				to = append(to, x)
			}
		}
		s.mu.Unlock()
		if len(to) == 0 {
			s.t.log.Debug("streamhttp: HTTP+SSE notification nobody waits for", "method", string(env.Method.Raw))
		}
		for _, x := range to {
			if x.in.Push(slices.Clone(d)) == mcpclient.PushFailed {
				s.remove(x)
				if !x.handshake {
					s.t.sendCancel(x.id, x.version)
				}
			}
		}
	case codec.KindRequest:
		s.t.log.Debug("streamhttp: ignoring a server request on the HTTP+SSE stream", "method", string(env.Method.Raw))
	default:
		s.t.log.Debug("streamhttp: HTTP+SSE event is not a JSON-RPC message", "data", fmt.Sprintf("%.64q", d))
	}
}

// end fails every exchange of a stream that ended with err.
func (s *legacyStream) end(err error) {
	s.dead.Store(true)
	s.c.close()
	s.mu.Lock()
	xs := make([]*legacyExchange, 0, len(s.byID))
	for _, x := range s.byID {
		xs = append(xs, x)
	}
	s.byID, s.byToken, s.listens = nil, nil, nil
	s.mu.Unlock()
	switch {
	case s.t.closed.Load():
		err = mcpclient.ErrClosed
	default:
		s.t.log.Debug("streamhttp: HTTP+SSE stream ended", "err", err)
		err = wrapDropped(err)
	}
	for _, x := range xs {
		x.in.End(err)
	}
}

// legacyExchange is one request on the HTTP+SSE transport: the stream's
// reader queues its messages in in. Every exchange, call or listen, fails
// with client.ErrSlowConsumer past Config.MaxQueued unread.
type legacyExchange struct {
	s         *legacyStream
	key, tok  string
	id        []byte
	version   string
	handshake bool
	status    int
	in        mcpclient.Inbox
}

// Status reports the HTTP status of the POST's reply.
func (x *legacyExchange) Status() int { return x.status }

// Next returns the next queued message. The end of ctx abandons the
// exchange (as Close), as it does on Streamable HTTP (HCAN-01).
func (x *legacyExchange) Next(ctx context.Context) ([]byte, error) {
	msg, err := x.in.Next(ctx)
	if err != nil && err == ctx.Err() {
		_ = x.Close()
	}
	return msg, err
}

// Close abandons the exchange; before its response the server is told
// with notifications/cancelled.
func (x *legacyExchange) Close() error {
	pending := x.in.Cancel(mcpclient.ErrClosed)
	x.s.remove(x)
	if pending && !x.handshake {
		x.s.t.sendCancel(x.id, x.version)
	}
	return nil
}
