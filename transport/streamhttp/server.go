package streamhttp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// ErrNonLoopback is returned when asked to listen on a non-loopback
// address without Config.AllowNonLoopback (SEC-04).
var ErrNonLoopback = errors.New("streamhttp: refusing a non-loopback listener without AllowNonLoopback")

// Server is the Streamable HTTP binding of an engine.Server: one POST
// endpoint on fasthttp, plus a net/http adapter (Handler) with the same
// behaviour.
type Server struct {
	eng   *engine.Server
	scope *engine.Scope
	cfg   Config
	path  []byte

	origins   originSet
	hosts     hostSet
	checkHost bool
	peek      codec.PeekConfig

	xpool   sync.Pool
	stats   Stats
	gauges  gauges // metrics.go
	closing atomic.Bool

	tlsConf *tls.Config // Config.TLS as served (serverTLS); nil: plain HTTP
	tlsErr  error       // Config.TLS cannot be served: Serve and NetListener's Accept return it

	mu   sync.Mutex
	fast *fastServer
	clk  coarseClock // per-request deadlines while the fasthttp front end serves
}

// New binds the engine to HTTP with cfg.
func New(eng *engine.Server, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		eng:   eng,
		scope: engine.NewScope(eng, "http"),
		cfg:   cfg,
		path:  []byte(cfg.Path),
		peek:  codec.PeekConfig{MaxDepth: eng.Config().MaxDepth},
	}
	if cfg.AllowedOrigins != nil {
		s.origins = newOriginSet(cfg.AllowedOrigins)
	}
	hosts := cfg.AllowedHosts
	if hosts == nil {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	s.hosts = newHostSet(hosts)
	s.tlsConf, s.tlsErr = serverTLS(cfg.TLS)
	if len(cfg.PublicMounts) > 0 {
		m := make(map[string]http.Handler, len(cfg.Mounts)+len(cfg.PublicMounts))
		maps.Copy(m, cfg.Mounts)
		maps.Copy(m, cfg.PublicMounts)
		s.cfg.Mounts = m
	}
	return s
}

// Stats returns the transport's counters.
func (s *Server) Stats() *Stats { return &s.stats }

// bindAddr records the listening address: it decides the default Origin
// allow-list and whether Host is checked.
func (s *Server) bindAddr(addr net.Addr) error {
	a := addr.String()
	loop := netutil.IsLoopback(a)
	if !loop && !s.cfg.AllowNonLoopback {
		return ErrNonLoopback
	}
	s.checkHost = loop
	if s.origins == nil {
		port := 0
		if ta, ok := addr.(*net.TCPAddr); ok {
			port = ta.Port
		} else if _, p, err := net.SplitHostPort(a); err == nil {
			port, _ = strconv.Atoi(p)
		}
		scheme := "http"
		if s.tlsConf != nil {
			scheme = "https"
		}
		s.origins = newOriginSet(loopbackOrigins(scheme, port))
	}
	return nil
}

// reqInfo is what the pipeline needs from one HTTP request; both front
// ends fill it. Slices alias the request.
type reqInfo struct {
	ctx                                     context.Context
	method, path, host                      []byte
	origin, ctype, accept, cenc, auth       []byte
	aenc                                    []byte // Accept-Encoding
	hasOrigin, hasCType, hasAccept, hasCEnc bool
	body                                    []byte
	public                                  bool                  // a PublicMounts path: no Authenticate
	chains                                  [][]*x509.Certificate // verified TLS peer chains (only with Authenticate)
	raw                                     net.Conn              // for the disconnect watcher; may be nil
	lc                                      *limitConn            // fasthttp: the connection's limitConn (nil: none, or net/http)
	atPath                                  bool                  // path is known to be Config.Path (fasthttp compared it already)
	// alone: nothing outside this goroutine can cancel the exchange
	// until dispatch arms its watcher or hands it on (fasthttp: no
	// request context whose end cancels it, as net/http's does).
	alone bool

	// For Config.Authenticate (F4): net/http's request context, whose end
	// means the client left (nil on fasthttp), or on fasthttp the watcher
	// to arm on raw for the same news.
	gone  context.Context
	watch *watcher
	// goneCounted: a client that leaves is counted in Stats.Disconnects
	// by the exchange (net/http's POST path cancels it when the request's
	// context ends), so the authenticator's end does not count it again.
	goneCounted bool
}

// respWriter is the front end's response side.
type respWriter interface {
	header(k, v string)
	// send writes a complete response; contentType "" means no body.
	send(status int, contentType string, body []byte)
	// stream writes the SSE response headers and runs (or arranges to run)
	// x.runStream, which releases the HTTP side's reference to x.
	stream(x *exchange)
	// streamListen is stream for a long-lived listen stream; the front end
	// may take the connection over so that the stream holds no server
	// goroutine or buffer.
	streamListen(x *exchange)
}

const (
	ctJSON = "application/json"
	ctSSE  = "text/event-stream"
)

// Pre-encoded transport-level error bodies (no id: the body was not read).
var (
	bodyUnsupportedType = []byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Unsupported Media Type: Content-Type must be application/json"}}`)
	bodyNotAcceptable   = []byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Acceptable: Accept must list application/json and text/event-stream"}}`)
	bodyShuttingDown    = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Server is shutting down"}}`)
)

// admit runs the checks every path of the listener shares (the MCP
// endpoint and the mounts): shutdown, Origin, Host, then
// Config.Authenticate. It returns the principal, or false once the refusal
// is answered. Of r it reads ctx, origin, hasOrigin, host and auth.
func (s *Server) admit(r *reqInfo, w respWriter) (principal any, ok bool) {
	if s.closing.Load() { // C14
		s.stats.ShuttingDown.Add(1)
		w.send(503, ctJSON, bodyShuttingDown)
		return nil, false
	}
	if r.hasOrigin && !s.originAllowed(r) { // SEC-01, B6, B7
		s.stats.BadOrigin.Add(1)
		w.send(403, "", nil)
		return nil, false
	}
	// SEC-03, B7. The Host the connection's last request was let through
	// with is compared here, without a call (a function for it would not
	// inline); hostAllowed checks any other.
	if s.checkHost && !(r.lc != nil && r.lc.hostOK != nil && shortEqual(r.lc.hostOK, r.host)) && !s.hostAllowed(r) {
		s.stats.BadHost.Add(1)
		w.send(403, "", nil)
		return nil, false
	}
	if s.cfg.Authenticate == nil || r.public {
		return nil, true
	}
	return s.authenticate(r, w)
}

// maxRememberedValue bounds the Host and Origin values a connection
// remembers as allowed (longer ones are checked on every request).
const maxRememberedValue = 256

// originAllowed is origins.allows, remembered per connection (fasthttp
// front end): a client sends the same Origin on each request of a
// connection, and the allow-list does not change once serving, so a value
// equal to the last one allowed on the connection is allowed without
// normalising it again. Anything else is checked in full.
func (s *Server) originAllowed(r *reqInfo) bool {
	lc := r.lc
	if lc != nil && lc.originOK != nil && bytes.Equal(lc.originOK, r.origin) {
		return true
	}
	if !s.origins.allows(r.origin) {
		return false
	}
	if lc != nil && len(r.origin) <= maxRememberedValue {
		lc.originOK = append(lc.originOK[:0], r.origin...)
	}
	return true
}

// hostAllowed is hosts.allows for a Host its connection does not
// remember (admit compares the remembered one first), remembered per
// connection like originAllowed.
func (s *Server) hostAllowed(r *reqInfo) bool {
	if !s.hosts.allows(r.host) {
		return false
	}
	if lc := r.lc; lc != nil && len(r.host) <= maxRememberedValue {
		lc.hostOK = append(lc.hostOK[:0], r.host...)
	}
	return true
}

// serve is the validation pipeline, cheapest checks first, then the
// dispatch: the peek, the engine's checks and the run.
func (s *Server) serve(r *reqInfo, x *exchange, w respWriter) {
	if !r.atPath && !bytes.Equal(r.path, s.path) {
		s.stats.NotFound.Add(1)
		w.send(404, "", nil)
		return
	}
	if string(r.method) != "POST" { // HTTP-10, B14
		s.stats.MethodNotAllowed.Add(1)
		w.header("Allow", "POST")
		w.send(405, "", nil)
		return
	}
	// admit's usual answer, settled here without its call: not closing,
	// no Origin, no Config.Authenticate, and the Host the connection's
	// last request was let through with (or Host not checked) pass with
	// no principal. admit checks anything else in full. A check added
	// to admit must also make this condition true for what it may refuse.
	var principal any
	if s.closing.Load() || r.hasOrigin || s.cfg.Authenticate != nil ||
		s.checkHost && !(r.lc != nil && r.lc.hostOK != nil && shortEqual(r.lc.hostOK, r.host)) {
		var ok bool
		if principal, ok = s.admit(r, w); !ok {
			return
		}
	}
	if !r.hasCType || !isJSONType(r.ctype) { // HTTP-09, B15
		s.stats.BadContentType.Add(1)
		w.send(415, ctJSON, bodyUnsupportedType)
		return
	}
	if !acceptsExample(r.accept) && !acceptsOther(r.accept) { // acceptsBoth, its first test without a call; HTTP-03, B15
		s.stats.NotAcceptable.Add(1)
		w.send(406, ctJSON, bodyNotAcceptable)
		return
	}
	body := r.body
	if r.hasCEnc && !isIdentity(r.cenc) {
		var status int
		body, status = s.decodeBody(r.cenc, body, x)
		if status != 0 {
			w.send(status, "", nil)
			return
		}
	}
	// What was dispatch follows in the same function: one frame, no
	// call with five arguments, on every request.

	// Peek straight into a pooled request's envelope (~400 bytes that
	// Begin would otherwise copy from one of ours).
	pre := s.scope.Prepare()
	env := pre.Envelope()
	o := s.peek
	o.Memo = &x.memo
	if err := codec.PeekWith(body, env, o); err != nil {
		var ce *codec.Error
		if !errors.As(err, &ce) {
			ce = codec.ErrParse
		}
		s.stats.BadMessage.Add(1)
		s.sendError(w, env, ce, 400) // GEN-09, HVAL-02 step 4
		pre.Discard()
		return
	}
	switch env.Kind {
	case codec.KindResponse: // HTTP-05, LEG-06
		s.stats.BadMessage.Add(1)
		s.sendError(w, env, errPostedResponse, 400)
		pre.Discard()
		return
	case codec.KindNotification: // HTTP-06, HTTP-08
		s.stats.Notifications.Add(1)
		pre.Discard()
		w.send(202, "", nil)
		return
	}
	c := s.scope.BeginPrepared(pre, r.ctx, body, x, principal, 0) // body lives until the handler returns; Start copies it
	// The headers reach the handler through x (RequestHeaders), not
	// SetHeaders. An anonymous caller is limited by its IP. fasthttp: the
	// key and the ConnInfo are read from the connection (never copied to
	// x); net/http: from x, where its front end put them. Each is set only
	// when there is one: an empty key or a nil ConnInfo is what an unset
	// one reads as, and a setter marks the request for release's clearing.
	peer, info := x.peer, x.info
	if lc := r.lc; lc != nil {
		peer, info = lc.peer, lc.info
	}
	if peer != "" {
		c.SetLimitKey(peer)
	}
	if info != nil {
		c.SetConn(info)
	}
	x.bind(c, r.alone)
	if e := s.check(c, &x.hdr, &x.scratch, &x.vals); e != nil {
		s.reject(w, r, x, c, e)
		return
	}
	if s.cfg.Authorize != nil && s.cfg.Authenticate != nil {
		if e := s.authorize(r, c, principal, w); e != nil {
			c.Fail(e)
			s.sendReply(w, r, x)
			return
		}
	}
	inline := c.Inline() // asked once: the test below and the run's watch both need it
	if !c.HasTimeout() && (!c.MayNotify() || inline) {
		// Run on this goroutine: no hand-off. Either no notification can
		// precede the response (one JSON body: HTTP-07, SSE-10), or the
		// handler is Inline — microseconds by contract — so whatever it
		// notifies (progress, logs) is sent with its result once it
		// returns. A progressToken or logLevel therefore costs nothing
		// until the handler actually uses it (issue 8).
		if !inline {
			// An Inline handler is microseconds by contract: a watch
			// (a timer armed and stopped) would cost more than it could
			// save.
			x.quiet = false // the watcher may cancel x meanwhile
			x.watch.arm(r.raw, watchDelay, x.onGone)
		}
		c.Run()
		if !inline {
			x.watch.stop()
		}
		// One look at the exchange for both questions: did a
		// notification come first, and what is the reply. Under its lock,
		// unless x is quiet: Reply and Done came on this goroutine, and
		// nothing else writes what is read here (a slow-consumer
		// goroutine finds gone set and only reads).
		locked := x.lockUnlessQuiet()
		streaming := x.mode == modeSSE && x.gone == nil
		status, body, retry := x.status, x.reply, x.retry
		if locked {
			x.mu.Unlock()
		}
		if streaming {
			s.streamInline(w, x)
			return
		}
		// sendReplyOf's usual case without its call: a status to send and
		// no header of replyHeaders' (the condition is sendReplyOf's own);
		// the body is the one in place (nil: send keeps it) or x's reply.
		if status == 0 || s.replyNeedsHeaders(status) {
			s.sendReplyOf(w, r, x, status, body, retry)
			return
		}
		if x.inPlace {
			body = nil
		}
		w.send(status, ctJSON, body)
		return
	}
	x.handOff() // a worker may answer, the watcher cancel
	listen := c.Method() == "subscriptions/listen"
	if listen {
		// A listen stream learns of a disconnect at its next write or
		// keep-alive (C6); it holds no watcher.
		x.listen = true
	} else {
		x.watch.arm(r.raw, 0, x.onGone)
	}
	x.ownHeaders() // a worker may run the handler after this goroutine has moved on
	c.Start()
	m, err := x.waitFirst()
	if err != nil || m != modeSSE {
		x.watch.stop()
		if err != nil {
			// Counted where it was found: a client that left in
			// Disconnects (exchange.cancel), a cancelled call in the
			// engine's Cancelled.
			w.send(499, "", nil) // the client is gone; nobody reads this
			return
		}
		s.sendReply(w, r, x)
		return
	}
	s.stats.Streams.Add(1)
	if listen {
		w.streamListen(x)
		return
	}
	w.header("Cache-Control", "no-cache")
	w.header("X-Accel-Buffering", "no") // SSE-04
	w.stream(x)
}

// reject answers a request the checks refused with e (check). Out of
// line, as dispatch's other rare paths, so that dispatch's own code stays
// short.
//
//go:noinline
func (s *Server) reject(w respWriter, r *reqInfo, x *exchange, c *engine.Request, e *codec.Error) {
	s.stats.Rejected.Add(1)
	if isDuplicateMirrored(e) { // B12, F2
		s.stats.DuplicateHeaders.Add(1)
	}
	c.Fail(e)
	s.sendReply(w, r, x)
}

// streamInline answers with an SSE stream a request run on dispatch's
// goroutine that notified before it replied.
//
//go:noinline
func (s *Server) streamInline(w respWriter, x *exchange) {
	x.quiet = false // the stream's pump and writers take the lock from here on
	s.stats.Streams.Add(1)
	w.header("Cache-Control", "no-cache")
	w.header("X-Accel-Buffering", "no") // SSE-04
	w.stream(x)
}

var errPostedResponse = codec.NewError(codec.CodeInvalidRequest, "Invalid Request: clients do not send responses")

// check interleaves the header checks with the engine's _meta checks in
// the order of HVAL-02 (steps 7-15).
func (s *Server) check(c *engine.Request, h *mirrored, scratch *[]byte, vals *[maxFlatBindings][]byte) *codec.Error {
	env := c.Envelope()
	if !env.ProtocolVersion.Present && env.Method.EqualString("initialize") {
		return c.CheckMeta() // DISC-05: -32022 naming the served versions
	}
	if e := h.checkVersionPresent(); e != nil {
		return e
	}
	if e := c.CheckMeta(); e != nil {
		return e
	}
	// A message of a template whose engine steps the Call kept: the
	// engine's version, method and target steps pass (and set the method
	// and tool); the header steps between them still run, in order.
	kept := c.CheckKept()
	// Steps 9 and 11 in their usual case, a body string without escapes
	// equal to its header (sent once), pass here without a call; the
	// checks themselves answer anything else.
	if pv := &env.ProtocolVersion; !pv.Present || pv.Escaped || !shortEqual(pv.Raw, h.version.v) {
		if e := h.checkVersionEqual(env); e != nil {
			return e
		}
	}
	if !kept {
		if e := c.CheckVersion(); e != nil {
			return e
		}
	}
	if me := &env.Method; h.method.n != 1 || !me.Present || me.Escaped || !shortEqual(me.Raw, h.method.v) {
		if e := h.checkMethod(env); e != nil {
			return e
		}
	}
	if !kept {
		if e := c.CheckMethod(); e != nil {
			return e
		}
	}
	if e := h.checkName(env, c.Method(), scratch); e != nil {
		return e
	}
	if !kept {
		if e := c.CheckTarget(); e != nil {
			return e
		}
	}
	if t := c.Tool(); t != nil {
		if e := h.checkParams(env, t, scratch, vals); e != nil {
			return e
		}
	}
	return c.CheckCapabilities()
}

func (s *Server) sendReply(w respWriter, r *reqInfo, x *exchange) {
	x.mu.Lock()
	status, body, retry := x.status, x.reply, x.retry
	x.mu.Unlock()
	s.sendReplyOf(w, r, x, status, body, retry)
}

// sendReplyOf is sendReply with x's status, reply and retry already read.
func (s *Server) sendReplyOf(w respWriter, r *reqInfo, x *exchange, status int, body []byte, retry int) {
	if status == 0 {
		w.send(499, "", nil) // cancelled: nothing to say
		return
	}
	// inPlace: the reply is the fasthttp response's body already
	// (Reply on a quiet exchange); sent as it is unless compressed.
	inPlace := x.inPlace
	if s.replyNeedsHeaders(status) {
		body, inPlace = s.replyHeaders(w, r, x, status, body, retry, inPlace)
	}
	if inPlace {
		body = nil // send sets the status and type; the body stays
	}
	w.send(status, ctJSON, body)
}

// replyNeedsHeaders reports whether a reply of status goes through
// replyHeaders: compression is on, or it is a 503 or a 429 (Retry-After).
// sendReplyOf and serve's shortcut for the usual reply both test it, so a
// header added to replyHeaders is added to this condition, once.
func (s *Server) replyNeedsHeaders(status int) bool {
	return s.cfg.Compression || status == 503 || status == 429
}

// replyHeaders is sendReplyOf's part for a reply that is compressed, or
// says when to retry: it sets the headers and returns the body to send
// and whether it is still the one in place. Out of line, so that
// sendReplyOf's own code stays short.
//
//go:noinline
func (s *Server) replyHeaders(w respWriter, r *reqInfo, x *exchange, status int, body []byte, retry int, inPlace bool) ([]byte, bool) {
	if s.cfg.Compression {
		if inPlace {
			body = x.fw.ctx.Response.Body()
		}
		if len(body) >= s.cfg.CompressMinBytes {
			if enc := pickEncoding(r.aenc); enc != "" {
				x.zbuf = s.compress(enc, body, x.zbuf[:0])
				w.header("Content-Encoding", enc)
				w.header("Vary", "Accept-Encoding")
				s.stats.Compressed.Add(1)
				body, inPlace = x.zbuf, false
			}
		}
	}
	if status == 503 {
		// A shared service (state store, backplane) is unreachable: the
		// request may be retried, here or on another replica.
		s.stats.Unavailable.Add(1)
		w.header("Retry-After", "1")
	}
	if status == 429 {
		// A per-caller limit of the engine (limit.go): its data carries
		// the same retryAfter.
		w.header("Retry-After", strconv.Itoa(max(1, retry)))
	}
	return body, inPlace
}

func (s *Server) sendError(w respWriter, env *codec.Envelope, e *codec.Error, status int) {
	var id []byte
	if env.IDKind == codec.IDString || env.IDKind == codec.IDNumber {
		id = env.ID
	}
	w.send(status, ctJSON, codec.AppendErrorResponse(nil, id, e))
}

// Causes of an authentication context's end (F4).
var errAuthTimeout = errors.New("streamhttp: Authenticate did not return within AuthTimeout")

// bodyAuthTimeout answers an authentication past Config.AuthTimeout.
var bodyAuthTimeout = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Authentication timed out"}}`)

// bodyAuthUnavailable answers an Authenticator's ErrAuthUnavailable.
var bodyAuthUnavailable = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Authentication unavailable, retry later"}}`)

// authContext is the context Authenticate runs with: r's values, ended by
// Config.AuthTimeout (cause errAuthTimeout) or by the client leaving
// (cause errClientGone). On fasthttp the connection is watched for that
// only once the authenticator has run watchDelay, so a quick one never
// pays for the watch. stop releases it all.
func (s *Server) authContext(r *reqInfo) (ctx context.Context, stop func()) {
	parent := r.ctx
	if r.gone != nil {
		parent = r.gone // net/http: ends when the client goes away
	}
	if r.chains != nil {
		parent = context.WithValue(parent, chainsKey{}, r.chains)
	}
	cctx, cancel := context.WithCancelCause(parent)
	ctx, cancelT := context.WithTimeoutCause(cctx, s.cfg.AuthTimeout, errAuthTimeout)
	w := r.watch
	if r.gone == nil && r.raw != nil {
		if w == nil {
			w = new(watcher)
		}
		w.arm(r.raw, watchDelay, func() { cancel(errClientGone) })
	}
	return ctx, func() {
		if w != nil {
			w.stop()
		}
		cancelT()
		cancel(nil)
	}
}

func (s *Server) authenticate(r *reqInfo, w respWriter) (any, bool) {
	token := ""
	if a := r.auth; len(a) > 7 && equalFold(a[:7], "bearer ") {
		token = string(trimOWS(a[7:]))
	}
	ctx, stop := s.authContext(r)
	p, err := s.cfg.Authenticate(ctx, token)
	ended, cause := ctx.Err() != nil, context.Cause(ctx)
	stop()
	if err == nil {
		return p, true
	}
	switch {
	case ended && errors.Is(cause, errAuthTimeout):
		// Not the caller's fault: 503, as for any dependency that did not
		// answer (a JWKS or introspection endpoint), so that a client
		// retries rather than discards its token.
		s.stats.AuthTimeouts.Add(1)
		w.header("Retry-After", "1")
		w.send(503, ctJSON, bodyAuthTimeout)
		return nil, false
	case !ended && errors.Is(err, ErrAuthUnavailable):
		s.stats.AuthUnavailable.Add(1)
		w.header("Retry-After", "1")
		w.send(503, ctJSON, bodyAuthUnavailable)
		return nil, false
	case ended:
		// The client is gone: counted here unless its exchange counts it.
		if !r.goneCounted {
			s.stats.Disconnects.Add(1)
		}
		w.send(499, "", nil) // nobody reads this
		return nil, false
	}
	var scope *ErrInsufficientScope
	meta := ""
	if s.cfg.ResourceMetadata != "" {
		meta = fmt.Sprintf(`, resource_metadata=%q`, s.cfg.ResourceMetadata)
	}
	if errors.As(err, &scope) {
		s.stats.Forbidden.Add(1)
		w.header("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, scope.Scope)+meta)
		w.send(403, "", nil)
		return nil, false
	}
	s.stats.Unauthorized.Add(1)
	// RFC 6750 §3.1: a token that was sent and refused is invalid_token; a
	// request without one gets the bare challenge.
	invalid := ""
	if token != "" {
		invalid = ` error="invalid_token",`
	}
	if s.cfg.ChallengeScope != "" {
		invalid += fmt.Sprintf(` scope=%q,`, s.cfg.ChallengeScope)
	}
	switch {
	case meta != "":
		w.header("WWW-Authenticate", "Bearer"+invalid+meta[1:])
	case invalid != "":
		w.header("WWW-Authenticate", `Bearer realm="mcp",`+invalid[:len(invalid)-1])
	default:
		w.header("WWW-Authenticate", `Bearer realm="mcp"`)
	}
	w.send(401, "", nil)
	return nil, false
}

// errForbidden is the JSON-RPC error of a request Config.Authorize refused.
var errForbidden = &codec.Error{Code: codec.CodeInvalidRequest, Message: "Forbidden: the token does not allow this request", Status: 403}

// authorize runs Config.Authorize for a validated request; on a refusal it
// sets the challenge and returns the error to answer with.
func (s *Server) authorize(r *reqInfo, c *engine.Request, principal any, w respWriter) *codec.Error {
	env, method := c.Envelope(), c.Method()
	name := env.Name
	if method == "resources/read" {
		name = env.URI
	}
	err := s.cfg.Authorize(r.ctx, principal, method, name.String())
	if err == nil {
		return nil
	}
	s.stats.Forbidden.Add(1)
	var scope *ErrInsufficientScope
	if errors.As(err, &scope) {
		ch := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, scope.Scope)
		if s.cfg.ResourceMetadata != "" {
			ch += fmt.Sprintf(`, resource_metadata=%q`, s.cfg.ResourceMetadata)
		}
		w.header("WWW-Authenticate", ch)
	}
	return errForbidden
}

// isJSONType accepts application/json with optional parameters.
func isJSONType(v []byte) bool {
	return string(v) == ctJSON || isJSONTypeParams(v) // the first: what clients send, compared where called
}

// isJSONTypeParams is isJSONType for any other spelling.
func isJSONTypeParams(v []byte) bool {
	v = trimOWS(v)
	if i := bytes.IndexByte(v, ';'); i >= 0 {
		v = trimOWS(v[:i])
	}
	return equalFold(v, ctJSON)
}

// acceptsBoth reports whether Accept covers application/json and
// text/event-stream (wildcards count; HTTP-03). serve asks its two parts
// itself, so that HTTP-03's example spelling, what clients send, is told
// without a call.
func acceptsBoth(v []byte) bool {
	return acceptsExample(v) || acceptsOther(v)
}

// acceptsExample reports whether v is HTTP-03's example spelling,
// compared in parts of at most 16 bytes, which the compiler compares
// with word loads (a 35-byte compare is a call).
func acceptsExample(v []byte) bool {
	return len(v) == len("application/json, text/event-stream") && string(v[:16]) == "application/json" &&
		string(v[16:32]) == ", text/event-str" && string(v[32:]) == "eam"
}

// acceptsOther is acceptsBoth for any other value.
func acceptsOther(v []byte) bool {
	switch string(v) { // the other spellings clients send
	case "text/event-stream, application/json",
		"application/json,text/event-stream", "text/event-stream,application/json":
		return true
	}
	return acceptsList(v)
}

// acceptsList is acceptsBoth's reading of any list, item by item.
func acceptsList(v []byte) bool {
	j, e := false, false
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		if i := bytes.IndexByte(item, ';'); i >= 0 {
			item = item[:i]
		}
		item = trimOWS(item)
		switch {
		case equalFold(item, "*/*"):
			j, e = true, true
		case equalFold(item, ctJSON), equalFold(item, "application/*"):
			j = true
		case equalFold(item, ctSSE), equalFold(item, "text/*"):
			e = true
		}
	}
	return j && e
}

func isIdentity(v []byte) bool { return equalFold(trimOWS(v), "identity") }

// Shutdown stops this transport only: new POSTs get 503, its listen
// streams complete with a final result (SUB-10), its in-flight requests
// may finish until ctx ends and are then cancelled, and the listener
// closes. It returns by ctx's deadline. The engine and other transports go
// on: whoever created the engine shuts it down.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	err := s.scope.Shutdown(ctx)
	s.mu.Lock()
	f := s.fast
	s.mu.Unlock()
	if f != nil {
		if e := f.shutdown(ctx); err == nil {
			err = e
		}
	}
	s.clk.halt()
	return err
}

// Stats are the transport's counters, one per rejection reason.
type Stats struct {
	NotFound, MethodNotAllowed, ShuttingDown   atomic.Uint64
	BadOrigin, BadHost                         atomic.Uint64
	Unauthorized, Forbidden                    atomic.Uint64
	BadContentType, NotAcceptable              atomic.Uint64
	BodyTooLarge, HeadersTooLarge, BadEncoding atomic.Uint64
	BadFraming, ReadTimeouts, ReadIdleTimeouts atomic.Uint64
	BadMessage, Rejected, Notifications        atomic.Uint64
	Streams, KeepAlives, SlowConsumers         atomic.Uint64
	Compressed, Collapsed                      atomic.Uint64
	TooManyConns, TooManyConnsPerIP            atomic.Uint64
	StreamWriteErrors                          atomic.Uint64
	Disconnects                                atomic.Uint64 // requests whose client left before the reply was complete (a running one also counts in engine Stats.Cancelled)
	Unavailable                                atomic.Uint64 // 503 replies: shared state unreachable (engine.ErrUnavailable)
	DuplicateHeaders                           atomic.Uint64 // 400: a once-only header (Origin, Host, Authorization, Content-Type, a mirrored MCP header) sent twice (F2)
	AuthTimeouts                               atomic.Uint64 // 503: Config.Authenticate still running after AuthTimeout (F4)
	AuthUnavailable                            atomic.Uint64 // 503: Config.Authenticate returned ErrAuthUnavailable
	Proxied, BadProxyHeader                    atomic.Uint64 // connections from Config.TrustedProxies; those closed for a bad or missing PROXY header
	TLSHandshakeErrors, PlainOnTLS             atomic.Uint64 // failed TLS handshakes (a client that left is not one); plain HTTP sent to a TLS listener (answered 400)
}
