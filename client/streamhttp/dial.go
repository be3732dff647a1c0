package streamhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/internal/httpwire"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultMaxConns    = 64
	DefaultDialTimeout = 10 * time.Second
	DefaultIdleTimeout = 30 * time.Second
	DefaultMaxMessage  = framing.DefaultMaxLine // the bound the server puts on a request body
	DefaultMaxQueued   = mcpclient.DefaultMaxQueued
)

// ErrBadReply: the server's reply breaks HTTP or the protocol: a JSON
// body whose response id is not the request's, an event that is not a
// JSON-RPC message, a malformed status line, headers or chunk. The
// connection is closed; the server may have run the request. (On an SSE
// reply a response with another id is dropped and counted instead, and
// the exchange goes on waiting for its own: RELIABILITY D5.)
var ErrBadReply = errors.New("streamhttp: malformed reply")

// Errors wrapped with client.ErrDropped.
var (
	errStreamEnded    = errors.New("streamhttp: the reply ended before the response")
	errSessionExpired = errors.New("streamhttp: session expired (404 on a request with Mcp-Session-Id, COMPAT-07)")
)

// statusBodyMax bounds client.StatusError.Body.
const statusBodyMax = 512

// notifyBodyMax bounds the body of a reply to a notification that is
// read to keep the connection; a longer one closes it.
const notifyBodyMax = 64 << 10

// Config configures Dial. Every field's zero value selects the
// documented default; its limits follow mcpwire's rule (see Limits in
// package client's documentation): 0 is the default, negative is no
// limit.
type Config struct {
	// MaxConns bounds the connections open to the server at once: idle
	// keep-alive ones and those carrying a request (a listen stream holds
	// one for its whole life). A request that finds none free waits for
	// one, as long as its context allows. Default 64
	// (DefaultMaxConns); negative: no bound (unsafe: a burst of
	// requests opens as many connections).
	MaxConns int
	// DialTimeout bounds opening one connection (TCP connect and TLS
	// handshake) on top of the request's context. Default
	// DefaultDialTimeout (10 s); negative: only the context bounds it.
	DialTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that stayed idle this
	// long, before the server's own idle timeout is likely to. Default
	// DefaultIdleTimeout (30 s); negative: never.
	IdleTimeout time.Duration
	// TLSConfig is used for https URLs. It is cloned; an empty ServerName
	// becomes the URL's host, and ALPN is set to http/1.1 only. Nil: the
	// system roots.
	TLSConfig *tls.Config
	// Header holds extra headers sent with every request (Authorization,
	// for example). Dial refuses names the transport writes itself (Host,
	// Content-Type, Content-Length, Transfer-Encoding, Connection, Accept,
	// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id,
	// Mcp-Param-*) and values with control characters. Nil: none.
	Header http.Header
	// MaxMessage bounds one message from the server: a JSON body or the
	// data of one event, whatever size the reply announces. Past it the
	// exchange fails with client.ErrTooLarge and the connection is closed
	// (memory stays bounded by about twice the limit). Default 4 MiB
	// (DefaultMaxMessage); negative: no bound (unsafe).
	MaxMessage int
	// MaxQueued bounds the unread messages held for one exchange on the
	// 2024-11-05 HTTP+SSE transport (client.Era2024), where one stream
	// carries every reply; past it the exchange fails with
	// client.ErrSlowConsumer. Streamable HTTP exchanges hold none: a
	// message is read from its connection only when Next asks for it.
	// Default 4096 (DefaultMaxQueued); negative: no bound (unsafe).
	MaxQueued int
	// Auth, when set, authorizes the requests (OAuth 2.1 for MCP: package
	// client/oauth implements it): each request carries the
	// Authorization value it returns (SEC-04: a header, never the query),
	// and a 401 or 403 reply goes to its Challenge; when that succeeds the
	// request is sent again (at most 3 times per request), else the reply's
	// *client.StatusError is returned along with the reason. Header must
	// not then hold Authorization. Nil: no authorization beyond Header, at
	// no cost on the request path.
	Auth Authorizer
	// Logger receives a warning when a connect hook fails, and debug logs
	// (messages ignored: server requests on a stream, replies nobody waits
	// for; legacy sessions ending). Nil discards them.
	Logger *slog.Logger
}

func (o Config) withDefaults() Config {
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxMessage == 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	switch {
	case o.MaxQueued == 0:
		o.MaxQueued = DefaultMaxQueued
	case o.MaxQueued < 0:
		o.MaxQueued = math.MaxInt
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// transport is the Streamable HTTP client transport (Dial).
type transport struct {
	opts    Config
	base    *url.URL
	addr    string // host:port dialled
	host    string // Host header
	target  string // request-target of the endpoint
	extra   []byte // Config.Header, rendered
	tlsConf *tls.Config
	dialer  net.Dialer
	log     *slog.Logger
	maxMsg  int64 // < 0: no bound
	peek    codec.PeekConfig

	pool connPool

	ctx    context.Context // ends at Close: background work
	cancel context.CancelFunc
	done   chan struct{} // closed at Close
	closed atomic.Bool

	bgMu     sync.Mutex // guards wg.Add against Close's Wait
	bgClosed bool
	wg       sync.WaitGroup

	era     atomic.Uint32 // client.Era
	session atomic.Pointer[session]
	hook    atomic.Pointer[mcpclient.ConnectHook]
	gate    atomic.Pointer[gate]

	legacyMu sync.Mutex // SwitchEra(Era2024)
	legacy   atomic.Pointer[legacyStream]

	unmatched atomic.Uint64 // Stats.Unmatched
}

// Stats counts what the transport dropped. Reach it from the
// client.Transport Dial returns with interface{ Stats() Stats }.
type Stats struct {
	// Unmatched: responses on a reply stream whose id was not the
	// request's, dropped (RELIABILITY D5).
	Unmatched uint64
}

// Stats returns the counters.
func (t *transport) Stats() Stats { return Stats{Unmatched: t.unmatched.Load()} }

// session is the Mcp-Session-Id of a 2025-era server and the revision the
// request that got it carried.
type session struct{ id, version string }

// Dial returns a client.Transport for the MCP endpoint at rawURL (http://
// or https://). It connects lazily: each request takes a keep-alive
// connection from a pool (Config.MaxConns) or opens one, and sends
// one POST (HTTP-02) with the mirrored headers (HDR-01, HDR-03, HDR-04,
// Mcp-Param-*; Mcp-Name in the Base64 sentinel form when needed, B64-01).
//
// Open returns once the reply's status line and headers have arrived.
// Replies: an application/json body is the one message of the exchange;
// each event of a text/event-stream body is one (SSE-07; requests a
// legacy server sends on it are ignored), up to the response with the
// request's id. A JSON-RPC body is delivered whatever the status (400 +
// -32022, 404 + -32601: the exchange's Status reports it); a reply without
// one is a *client.StatusError. Closing an exchange before its response
// closes its connection (HCAN-01); so does the end of the context of an
// Open or Next call while it waits (TMO-01; between calls a context may
// end without effect, so that a listen stream outlives the context that
// opened it). After the response, the connection goes back to the pool.
// Messages are read from the connection only as Next asks for them.
//
// Failures: a failed connect or write, or a kept-alive connection closed
// before a byte of the reply, wrap client.ErrNotDelivered (the request can
// be sent again with a new id); a reply cut short wraps client.ErrDropped;
// a message over Config.MaxMessage is client.ErrTooLarge; a reply that
// breaks the protocol wraps ErrBadReply.
//
// The transport implements SwitchEra (client.Era2025: Mcp-Session-Id,
// client.Era2024: the deprecated HTTP+SSE transport, COMPAT-04) and
// SetConnectHook, run after a 2025-era session expired or a lost HTTP+SSE
// stream was opened again, before other requests go on.
func Dial(rawURL string, opts Config) (mcpclient.Transport, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("streamhttp: bad URL: %w", err)
	}
	isTLS := false
	port := "80"
	switch u.Scheme {
	case "http":
	case "https":
		isTLS, port = true, "443"
	default:
		return nil, fmt.Errorf("streamhttp: URL %q: scheme must be http or https", rawURL)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("streamhttp: URL %q has no host", rawURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("streamhttp: URL %q: credentials in the URL are not supported (use Config.Header)", rawURL)
	}
	u.Fragment, u.RawFragment = "", ""
	if p := u.Port(); p != "" {
		port = p
	}
	opts = opts.withDefaults()
	extra, err := renderHeaders(opts.Header)
	if err != nil {
		return nil, err
	}
	if opts.Auth != nil && opts.Header.Get("Authorization") != "" {
		return nil, errors.New("streamhttp: Config.Header holds Authorization and Config.Auth is set")
	}
	t := &transport{
		opts:   opts,
		base:   u,
		addr:   net.JoinHostPort(u.Hostname(), port),
		host:   u.Host,
		target: u.RequestURI(),
		extra:  extra,
		log:    opts.Logger,
		maxMsg: int64(opts.MaxMessage),
		peek:   codec.PeekConfig{MaxDepth: -1},
		done:   make(chan struct{}),
	}
	if t.maxMsg < 0 {
		t.maxMsg = -1
	}
	if isTLS {
		if opts.TLSConfig != nil {
			t.tlsConf = opts.TLSConfig.Clone()
		} else {
			t.tlsConf = &tls.Config{}
		}
		if t.tlsConf.ServerName == "" {
			t.tlsConf.ServerName = u.Hostname()
		}
		t.tlsConf.NextProtos = []string{"http/1.1"}
	}
	t.pool = connPool{t: t, max: opts.MaxConns, all: make(map[*wconn]struct{})}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// reservedHeaders are the request headers the transport writes itself.
var reservedHeaders = []string{
	"host", "content-type", "content-length", "transfer-encoding", "connection", "accept",
	"mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id",
}

// renderHeaders writes h as header lines, sorted by name.
func renderHeaders(h http.Header) ([]byte, error) {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	var b []byte
	for _, k := range names {
		lk := strings.ToLower(k)
		if slices.Contains(reservedHeaders, lk) || strings.HasPrefix(lk, "mcp-param-") {
			return nil, fmt.Errorf("streamhttp: Config.Header: %s is written by the transport", k)
		}
		if !validHeaderName(k) {
			return nil, fmt.Errorf("streamhttp: Config.Header: bad header name %q", k)
		}
		for _, v := range h[k] {
			if !validHeaderValue(v) {
				return nil, fmt.Errorf("streamhttp: Config.Header: bad value for %s", k)
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, strings.Trim(v, " \t")...)
			b = append(b, "\r\n"...)
		}
	}
	return b, nil
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool { return netutil.IsToken(s) }

// validHeaderValue reports whether s has no control character but HTAB
// (no header can be smuggled through it).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// checkOutgoing refuses what cannot be written into headers safely.
func checkOutgoing(out *mcpclient.Outgoing) error {
	if out.Method == "" || !validHeaderValue(out.Method) {
		return fmt.Errorf("streamhttp: method %q cannot travel in Mcp-Method", out.Method)
	}
	if !validHeaderValue(out.Version) {
		return fmt.Errorf("streamhttp: protocol version %q cannot travel in MCP-Protocol-Version", out.Version)
	}
	for _, h := range out.Headers {
		if !validHeaderName(h.Name) || !validHeaderValue(h.Value) {
			return fmt.Errorf("streamhttp: header %q cannot be sent", h.Name)
		}
	}
	return nil
}

func wrapNotDelivered(what string, err error) error {
	return fmt.Errorf("%w: streamhttp: %s: %w", mcpclient.ErrNotDelivered, what, err)
}

func wrapDropped(err error) error {
	return fmt.Errorf("%w: %w", mcpclient.ErrDropped, err)
}

func badReply(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadReply}, args...)...)
}

func isStatusOK(s int) bool { return s >= 200 && s <= 299 }

func statusError(status int, body []byte) *mcpclient.StatusError {
	return &mcpclient.StatusError{Status: status, Body: slices.Clone(body[:min(len(body), statusBodyMax)])}
}

// appendPOST writes the head of a Streamable HTTP POST (HTTP-03, HDR-01,
// HDR-03, HDR-04, B64-01, PARAM-04) for a body of n bytes.
func (t *transport) appendPOST(b []byte, c *wconn, out *mcpclient.Outgoing, sess *session, n int) []byte {
	b = append(b, "POST "...)
	b = append(b, t.target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	if out.Version != "" {
		b = append(b, "MCP-Protocol-Version: "...)
		b = append(b, out.Version...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Mcp-Method: "...)
	b = append(b, out.Method...)
	b = append(b, "\r\n"...)
	if out.HasName {
		c.name = append(c.name[:0], out.Name...)
		b = append(b, "Mcp-Name: "...)
		b = codec.AppendHeaderValue(b, c.name)
		b = append(b, "\r\n"...)
	}
	for _, h := range out.Headers {
		b = append(b, h.Name...)
		b = append(b, ": "...)
		b = append(b, h.Value...)
		b = append(b, "\r\n"...)
	}
	if sess != nil {
		b = append(b, "Mcp-Session-Id: "...)
		b = append(b, sess.id...)
		b = append(b, "\r\n"...)
	}
	return t.appendEnd(b, c, n)
}

// appendEnd finishes a request head: extra headers, the Authorization the
// connection carries for this request (Config.Auth), Content-Length.
func (t *transport) appendEnd(b []byte, c *wconn, n int) []byte {
	b = append(b, t.extra...)
	if c.authz != "" {
		b = appendAuth(b, c)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "\r\n\r\n"...)
}

// write sends the request head in c.wbuf and body.
func (c *wconn) write(body []byte) error {
	var err error
	if len(c.wbuf)+len(body) <= dialWriteKeep {
		c.wbuf = append(c.wbuf, body...)
		_, err = c.nc.Write(c.wbuf)
	} else {
		bufs := net.Buffers{c.wbuf, body}
		_, err = bufs.WriteTo(c.nc)
	}
	if cap(c.wbuf) > dialWriteKeep {
		c.wbuf = nil
	}
	return err
}

// Open sends out as one POST and returns once the reply's status line and
// headers have arrived (or the request failed).
func (t *transport) Open(ctx context.Context, out *mcpclient.Outgoing) (mcpclient.Exchange, error) {
	if t.closed.Load() {
		return nil, mcpclient.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(out.ID) == 0 {
		return nil, errors.New("streamhttp: Open needs a request id (use Notify)")
	}
	if err := checkOutgoing(out); err != nil {
		return nil, err
	}
	era := mcpclient.Era(t.era.Load())
	if era == mcpclient.Era2024 {
		return t.openLegacy(ctx, out)
	}
	if !out.Handshake {
		if err := t.waitGate(ctx); err != nil {
			return nil, err
		}
	}
	if t.opts.Auth == nil {
		x, _, err := t.openOnce(ctx, out, era, "", "", false)
		return x, err
	}
	for tries := 0; ; tries++ {
		authz, proof, err := t.authorization(ctx, "POST", "")
		if err != nil {
			return nil, err
		}
		x, ch, err := t.openOnce(ctx, out, era, authz, proof, tries < maxAuthRetries)
		if ch == nil {
			return x, err
		}
		if err := t.answer(ctx, ch); err != nil {
			return nil, err
		}
	}
}

// openOnce sends out and reads the reply's head. With challengeable, a
// 401 or 403 reply is read whole and returned as a challenge instead.
func (t *transport) openOnce(ctx context.Context, out *mcpclient.Outgoing, era mcpclient.Era, authz, proof string, challengeable bool) (mcpclient.Exchange, *challenge, error) {
	c, reused, err := t.pool.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	c.authz, c.dpop = authz, proof
	x := &dialExchange{t: t, c: c, id: out.ID, era: era, reused: reused, handshake: out.Handshake, version: out.Version}
	if err := x.enter(ctx); err != nil {
		x.leave()
		return nil, nil, x.fail(err)
	}
	defer x.leave()
	var sess *session // Era2025: the session id sent
	if era == mcpclient.Era2025 {
		sess = t.session.Load()
	}
	c.begin()
	c.wbuf = t.appendPOST(c.wbuf[:0], c, out, sess, len(out.Body))
	if err := c.write(out.Body); err != nil {
		return nil, nil, x.failOpen(err, true)
	}
	if err := c.br.ReadHead(&c.h); err != nil {
		return nil, nil, x.failOpen(err, false)
	}
	if challengeable && isChallenge(c.h.Status) {
		ch := readChallenge(c)
		if ch.err != nil {
			return nil, nil, x.fail(ch.err)
		}
		x.end(ch.reusable, io.EOF)
		return nil, ch, nil
	}
	if err := x.start(sess); err != nil {
		return nil, nil, err
	}
	return x, nil, nil
}

// Notify sends out as one POST and reads the reply: 202 (HTTP-06), or any
// 2xx, is success; anything else a *client.StatusError.
func (t *transport) Notify(ctx context.Context, out *mcpclient.Outgoing) error {
	if t.closed.Load() {
		return mcpclient.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkOutgoing(out); err != nil {
		return err
	}
	era := mcpclient.Era(t.era.Load())
	if era == mcpclient.Era2024 {
		s, err := t.legacyFor(ctx, out.Handshake)
		if err != nil {
			return err
		}
		status, body, err := t.call(ctx, "POST", s.target, s.postHead(out), out.Body, notifyBodyMax)
		if err != nil && !errors.Is(err, mcpclient.ErrTooLarge) {
			return err
		}
		if !isStatusOK(status) {
			return statusError(status, body)
		}
		return nil
	}
	if !out.Handshake {
		if err := t.waitGate(ctx); err != nil {
			return err
		}
	}
	var sess *session
	if era == mcpclient.Era2025 {
		sess = t.session.Load()
	}
	head := func(b []byte, c *wconn) []byte { return t.appendPOST(b, c, out, sess, len(out.Body)) }
	status, body, err := t.call(ctx, "POST", "", head, out.Body, notifyBodyMax)
	if err != nil && !errors.Is(err, mcpclient.ErrTooLarge) {
		return err
	}
	if status == 404 && sess != nil {
		t.sessionExpired(sess)
		return wrapNotDelivered("notification", errSessionExpired)
	}
	if !isStatusOK(status) {
		return statusError(status, body)
	}
	return nil
}

// call sends one request on a pool connection and reads its whole reply:
// the status and the body, at most max bytes (past it: the bytes read,
// at least the first statusBodyMax, and client.ErrTooLarge; the
// connection is closed). A 2025-era session id in the reply is kept.
//
// method and target (the request-target when it is not the endpoint's)
// are what a DPoP proof is made for.
func (t *transport) call(ctx context.Context, method, target string, head func(b []byte, c *wconn) []byte, body []byte, max int64) (int, []byte, error) {
	if t.opts.Auth == nil {
		status, reply, _, err := t.callOnce(ctx, head, body, max, "", "", false)
		return status, reply, err
	}
	for tries := 0; ; tries++ {
		authz, proof, err := t.authorization(ctx, method, target)
		if err != nil {
			return 0, nil, err
		}
		status, reply, ch, err := t.callOnce(ctx, head, body, max, authz, proof, tries < maxAuthRetries)
		if ch == nil {
			return status, reply, err
		}
		if err := t.answer(ctx, ch); err != nil {
			return 0, nil, err
		}
	}
}

// callOnce is one attempt of call; with challengeable, a 401 or 403
// reply is returned as a challenge.
func (t *transport) callOnce(ctx context.Context, head func(b []byte, c *wconn) []byte, body []byte, max int64, authz, proof string, challengeable bool) (int, []byte, *challenge, error) {
	c, reused, err := t.pool.get(ctx)
	if err != nil {
		return 0, nil, nil, err
	}
	c.authz, c.dpop = authz, proof
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, c.close)
		defer stop()
	}
	fail := func(err error) error {
		c.close()
		if e := ctx.Err(); e != nil {
			return e
		}
		if t.closed.Load() {
			return mcpclient.ErrClosed
		}
		return err
	}
	c.begin()
	c.wbuf = head(c.wbuf[:0], c)
	if err := c.write(body); err != nil {
		return 0, nil, nil, fail(wrapNotDelivered("send", err))
	}
	if err := c.br.ReadHead(&c.h); err != nil {
		return 0, nil, nil, fail(headError(err, c, reused))
	}
	if challengeable && isChallenge(c.h.Status) {
		ch := readChallenge(c)
		if ch.err != nil {
			return 0, nil, nil, fail(ch.err)
		}
		if stop != nil && !stop() {
			c.close()
		} else if ch.reusable {
			t.pool.put(c)
		} else {
			c.close()
		}
		return 0, nil, ch, nil
	}
	status := c.h.Status // c is not ours once given back
	if s := c.h.Session; s != "" && mcpclient.Era(t.era.Load()) == mcpclient.Era2025 {
		t.keepSession(s, "")
	}
	c.body.Reset(&c.br, &c.h)
	reply, err := c.readBody(max)
	if err != nil {
		if errors.Is(err, mcpclient.ErrTooLarge) {
			c.close()
			return status, reply, nil, mcpclient.ErrTooLarge
		}
		return status, nil, nil, fail(bodyError(err))
	}
	if stop != nil && !stop() {
		c.close() // the context ended meanwhile; the reply is complete
		return status, reply, nil, nil
	}
	if c.reusable() {
		t.pool.put(c)
	} else {
		c.close()
	}
	return status, reply, nil, nil
}

// headError classifies a failure to read a reply's head: nothing arrived
// on a kept-alive connection (the server closed it while idle) → not
// delivered; a malformed head → ErrBadReply; anything else → dropped.
func headError(err error, c *wconn, reused bool) error {
	switch {
	case errors.Is(err, httpwire.ErrBadResponse), errors.Is(err, httpwire.ErrLineTooLong):
		return badReply("%w", err)
	case c.br.Got == 0 && reused:
		return wrapNotDelivered("kept-alive connection closed before the reply", err)
	}
	return wrapDropped(err)
}

// bodyError classifies a failure inside a body.
func bodyError(err error) error {
	if errors.Is(err, httpwire.ErrBadChunk) || errors.Is(err, httpwire.ErrLineTooLong) {
		return badReply("%w", err)
	}
	return wrapDropped(err)
}

// Close ends the transport: every open exchange fails with
// client.ErrClosed, every connection is closed, a 2025-era session is
// ended with a DELETE first (best effort, one second at most).
func (t *transport) Close() error {
	if !t.closed.CompareAndSwap(false, true) {
		return nil
	}
	if s := t.session.Load(); s != nil && mcpclient.Era(t.era.Load()) == mcpclient.Era2025 {
		t.deleteSession(s)
	}
	t.bgMu.Lock()
	t.bgClosed = true
	t.bgMu.Unlock()
	close(t.done)
	t.cancel()
	if s := t.legacy.Load(); s != nil {
		s.close()
	}
	t.pool.close()
	t.wg.Wait()
	return nil
}

// deleteSession ends a 2025-era session (DELETE with Mcp-Session-Id).
func (t *transport) deleteSession(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	head := func(b []byte, c *wconn) []byte {
		b = append(b, "DELETE "...)
		b = append(b, t.target...)
		b = append(b, " HTTP/1.1\r\nHost: "...)
		b = append(b, t.host...)
		b = append(b, "\r\nMcp-Session-Id: "...)
		b = append(b, s.id...)
		if s.version != "" {
			b = append(b, "\r\nMCP-Protocol-Version: "...)
			b = append(b, s.version...)
		}
		b = append(b, "\r\n"...)
		return t.appendEnd(b, c, 0)
	}
	if status, _, err := t.call(ctx, "DELETE", "", head, nil, statusBodyMax); err != nil {
		t.log.Debug("streamhttp: session DELETE failed", "err", err)
	} else {
		t.log.Debug("streamhttp: session ended", "status", status)
	}
}

// goBackground runs fn on a goroutine Close waits for; false when the
// transport is closed.
func (t *transport) goBackground(fn func()) bool {
	t.bgMu.Lock()
	defer t.bgMu.Unlock()
	if t.bgClosed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		fn()
	}()
	return true
}

// dialExchange is one POST whose reply is read on demand (Next), in the
// caller's goroutine: nothing is queued, the connection's flow control
// holds the server back. Its client.Inbox holds no message, only the end
// state that a cancellation from another goroutine (Close, the end of a
// context, the transport's Close) races with: whoever ends the exchange
// first owns the connection, to give it back or close it.
type dialExchange struct {
	t       *transport
	c       *wconn // the connection; the Next goroutine's
	id      []byte
	version string
	status  int
	final   error // what Next returns from now on (io.EOF after the response)

	wdone <-chan struct{} // Done of the context watched
	stop  func() bool     // stops the context watch

	// The small fields side by side: the struct is allocated per request.
	inCall    atomic.Bool // Open or Next runs
	era       mcpclient.Era
	reused    bool
	handshake bool
	sse       bool

	// in is open until the reply ends (End) or the exchange is cancelled
	// (Cancel, with the reason Next then reports).
	in mcpclient.Ending
}

// Status reports the HTTP status of the reply.
func (x *dialExchange) Status() int { return x.status }

// enter starts a call (Open, Next) under ctx: while it runs, the end of
// ctx cancels the exchange (HCAN-01: its connection is closed); between
// calls it does not (a listen stream opened under a short context lives
// on). The watch of one context is kept from call to call; a call under
// another context replaces it. It returns ctx's error when ctx is done.
func (x *dialExchange) enter(ctx context.Context) error {
	if d := ctx.Done(); d != x.wdone {
		// wdone and stop are the calling goroutine's (Open, then Next's):
		// no lock.
		x.wdone = d
		if x.stop != nil {
			x.stop()
			x.stop = nil
		}
		if d != nil && x.in.Err() == nil {
			x.stop = context.AfterFunc(ctx, func() {
				if x.inCall.Load() {
					x.abortWith(ctx.Err())
				}
			})
		}
	}
	// Set before ctx is looked at, read by the watch after ctx ended: an
	// end of ctx is seen by one of them.
	x.inCall.Store(true)
	if err := ctx.Err(); err != nil {
		x.abortWith(err)
		return err
	}
	return nil
}

// leave ends a call.
func (x *dialExchange) leave() { x.inCall.Store(false) }

// abortWith cancels the exchange before its end: the connection carrying
// the reply is closed (HCAN-01). A legacy-era request is also cancelled
// with notifications/cancelled (2025-era servers do not treat a
// disconnect as cancellation, LEG-05).
func (x *dialExchange) abortWith(err error) {
	if !x.in.Cancel(err) {
		return
	}
	x.c.close()
	if x.era == mcpclient.Era2025 && !x.handshake {
		x.t.sendCancel(x.id, x.version)
	}
}

// end gives the connection back (reusable) or closes it, and fixes what
// Next returns from now on.
func (x *dialExchange) end(reusable bool, final error) {
	if x.stop != nil {
		x.stop()
		x.stop = nil
	}
	// End fails when a cancellation came first: that closed the
	// connection, which is then not ours to give back.
	if x.in.End(final) && reusable {
		x.t.pool.put(x.c)
	} else {
		x.c.close()
	}
	x.final = final
}

// fail ends the exchange with err, or with the reason it was cancelled.
func (x *dialExchange) fail(err error) error {
	// Only a cancellation ends in before end runs: the failure seen was
	// its closing of the connection, and its reason is the one to report.
	if why := x.in.Err(); why != nil {
		err = why
	}
	if err != mcpclient.ErrClosed && x.t.closed.Load() && !errors.Is(err, mcpclient.ErrTooLarge) {
		err = mcpclient.ErrClosed
	}
	x.end(false, err)
	return err
}

// failOpen ends the exchange when the request could not be written or no
// head came back.
func (x *dialExchange) failOpen(err error, writing bool) error {
	if writing {
		err = wrapNotDelivered("send", err)
	} else {
		err = headError(err, x.c, x.reused)
	}
	return x.fail(err)
}

// start reads what the head says. A 404 to a request that carried the
// 2025-era session id sess means the session is gone (COMPAT-07).
func (x *dialExchange) start(sess *session) error {
	c := x.c
	h := &c.h
	x.status = h.Status
	if x.era == mcpclient.Era2025 && h.Session != "" {
		x.t.keepSession(h.Session, x.version)
	}
	c.body.Reset(&c.br, h)
	if x.era == mcpclient.Era2025 && h.Status == 404 && sess != nil {
		// The server ran nothing: the client may re-send it (with a new
		// id) once its connect hook has initialized a new session.
		x.t.sessionExpired(sess)
		return x.fail(wrapNotDelivered("request", errSessionExpired))
	}
	if h.SSE {
		x.sse = true
		c.sse.Types = false
		c.sse.Reset()
	}
	return nil
}

// Next returns the next message of the reply.
func (x *dialExchange) Next(ctx context.Context) ([]byte, error) {
	if x.final != nil {
		return nil, x.final
	}
	if x.in.Err() != nil { // cancelled between calls
		return nil, x.fail(nil)
	}
	if err := x.enter(ctx); err != nil {
		x.leave()
		return nil, x.fail(err)
	}
	defer x.leave()
	if x.sse {
		return x.nextEvent()
	}
	return x.nextJSON()
}

// Message kinds for the exchange.
const (
	msgInvalid = iota
	msgResponse
	msgNotification
	msgRequest
	msgWrongID
	msgNoID // a result without an id: answers nothing, breaks the protocol
)

// kind classifies one message of the reply. A response is the
// exchange's when its id is the request's; an error response without an
// id (or with null) answers a request whose id could not be read (GEN-05).
func (x *dialExchange) kind(msg []byte) int {
	env := &x.c.env
	_ = codec.PeekWith(msg, env, x.t.peek)
	switch env.Kind {
	case codec.KindNotification:
		return msgNotification
	case codec.KindRequest:
		return msgRequest
	case codec.KindResponse:
	default:
		return msgInvalid
	}
	switch env.IDKind {
	case codec.IDNone, codec.IDNull:
		if env.HasError {
			return msgResponse
		}
		return msgNoID
	case codec.IDNumber, codec.IDString:
		if sameID(env.ID, x.id) {
			return msgResponse
		}
	}
	return msgWrongID
}

// sameID compares two raw JSON ids; strings are compared unescaped.
func sameID(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	if len(a) < 2 || len(b) < 2 || a[0] != '"' || b[0] != '"' {
		return false
	}
	sa := codec.Str{Raw: a[1 : len(a)-1], Escaped: true, Present: true}
	return sa.Equal(codec.Str{Raw: b[1 : len(b)-1], Escaped: true, Present: true}.AppendUnescaped(nil))
}

// nextJSON reads a whole non-stream body: a JSON-RPC response is the
// exchange's one message; anything else is a *client.StatusError.
func (x *dialExchange) nextJSON() ([]byte, error) {
	c := x.c
	body, err := c.readBody(x.t.maxMsg)
	if err != nil {
		if errors.Is(err, mcpclient.ErrTooLarge) {
			if !isStatusOK(x.status) {
				return nil, x.fail(statusError(x.status, body))
			}
			return nil, x.fail(fmt.Errorf("%w: streamhttp: reply body over %d bytes", mcpclient.ErrTooLarge, x.t.maxMsg))
		}
		return nil, x.fail(bodyError(err))
	}
	k := msgInvalid
	if len(body) > 0 {
		k = x.kind(body)
	}
	switch k {
	case msgResponse:
		x.end(c.reusable(), io.EOF)
		return body, nil
	case msgWrongID, msgNoID:
		return nil, x.fail(badReply("response id does not match the request id %s", x.id))
	}
	se := statusError(x.status, body)
	x.end(c.reusable(), se)
	return nil, se
}

// nextEvent reads events until one is for the caller: a notification, or
// the response (then the exchange ends). Requests from legacy servers are
// ignored (SSE-02).
func (x *dialExchange) nextEvent() ([]byte, error) {
	c := x.c
	for {
		d, err := c.nextEvent(x.t.maxMsg)
		switch {
		case err == io.EOF:
			return nil, x.fail(wrapDropped(errStreamEnded))
		case errors.Is(err, mcpclient.ErrTooLarge):
			return nil, x.fail(fmt.Errorf("%w: streamhttp: event over %d bytes", mcpclient.ErrTooLarge, x.t.maxMsg))
		case err != nil:
			return nil, x.fail(bodyError(err))
		}
		if len(d) == 0 {
			continue // an empty event (a 2025-era priming event)
		}
		switch x.kind(d) {
		case msgNotification:
			return slices.Clone(d), nil
		case msgResponse:
			msg := slices.Clone(d)
			x.end(c.drainBuffered() && c.reusable(), io.EOF)
			return msg, nil
		case msgRequest:
			x.t.log.Debug("streamhttp: ignoring a server request on a reply stream", "method", string(c.env.Method.Raw))
		case msgWrongID:
			// D5: a response for another request on this one's stream
			// (a server or proxy mix-up) is not this call's answer:
			// dropped and counted; the call waits for its own.
			x.t.unmatched.Add(1)
			x.t.log.Warn("streamhttp: dropped a response with another id on a reply stream", "want", string(x.id), "snippet", fmt.Sprintf("%.80q", d))
		case msgNoID:
			return nil, x.fail(badReply("a result without an id on the reply stream of request %s", x.id))
		default:
			return nil, x.fail(badReply("event is not a JSON-RPC message: %.64q", d))
		}
	}
}

// Close abandons the exchange: before its response, its connection is
// closed (HCAN-01).
func (x *dialExchange) Close() error {
	x.abortWith(mcpclient.ErrClosed)
	return nil
}

// sendCancel tells a legacy-era server that request id is cancelled
// (notifications/cancelled), in the background and best effort.
func (t *transport) sendCancel(id []byte, version string) {
	body := make([]byte, 0, 96+len(id))
	body = append(body, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	body = append(body, id...)
	body = append(body, `,"reason":"cancelled by the client"}}`...)
	out := &mcpclient.Outgoing{Method: "notifications/cancelled", Version: version, Body: body, Handshake: true}
	t.goBackground(func() {
		ctx, cancel := context.WithTimeout(t.ctx, 2*time.Second)
		defer cancel()
		if err := t.Notify(ctx, out); err != nil {
			t.log.Debug("streamhttp: notifications/cancelled not sent", "err", err)
		}
	})
}
