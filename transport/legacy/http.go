package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/netutil"
	"github.com/mcpwire/mcpwire/state"
)

// Header names of the 2025-11-25 Streamable HTTP transport.
const (
	HeaderSession  = "Mcp-Session-Id"
	HeaderProtocol = "Mcp-Protocol-Version"
)

// Handler returns the 2025-11-25 Streamable HTTP endpoint (POST, GET and
// DELETE on one path). Mount it beside the modern endpoint, for example
// with streamhttp.Config.Mounts, or in any net/http router.
//
// On streamhttp's fasthttp front end it also serves the common case (a
// request of a live session) without a net/http request (fast.go).
func (s *Server) Handler() http.Handler { return handler{s} }

// principalKey carries an authenticated principal in a request context.
type principalKey struct{}

// WithPrincipal returns ctx carrying the caller's authenticated principal:
// a router that authenticates before the legacy handler sets it, and
// sessions are bound to it.
func WithPrincipal(ctx context.Context, p any) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// ServeHTTP serves one request of the legacy endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if s.closing.Load() {
		writeJSON(w, 503, encodeError(nil, codec.NewError(codec.CodeInternalError, "Server is shutting down")))
		return
	}
	if name := duplicateHeader(req.Header); name != "" {
		s.stats.DuplicateHeaders.Add(1)
		s.bad(w, 400, nil, codec.NewError(codec.CodeInvalidRequest, "Bad Request: more than one "+name+" header"))
		return
	}
	principal := s.cfg.Principal(req.Context())
	switch req.Method {
	case http.MethodPost:
		s.post(w, req, principal)
	case http.MethodGet:
		s.get(w, req, principal)
	case http.MethodDelete:
		s.delete(w, req, principal)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		w.WriteHeader(405)
	}
}

// onceOnly are the headers this endpoint reads that a request may carry
// at most once (F2): of two Mcp-Session-Id lines a balancer may route on
// one and Header.Get return the other. streamhttp's mounts refuse two
// Origin, Authorization or Content-Type lines before this handler runs;
// Content-Type is checked here too for a router of another kind.
var onceOnly = [...]string{HeaderSession, HeaderProtocol, "Content-Type"}

// duplicateHeader names the first header of onceOnly that h has twice.
func duplicateHeader(h http.Header) string {
	for _, k := range onceOnly {
		if len(h[k]) > 1 {
			return k
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *Server) bad(w http.ResponseWriter, status int, id json.RawMessage, e *codec.Error) {
	s.stats.BadRequests.Add(1)
	writeJSON(w, status, encodeError(id, e))
}

// session finds the request's session: 400 without the header, 404 for an
// unknown or expired one (a 2025 client then initializes again), 503 when
// the store cannot be reached.
func (s *Server) session(w http.ResponseWriter, req *http.Request, principal any) *session {
	id := req.Header.Get(HeaderSession)
	if id == "" {
		s.stats.MissingSession.Add(1)
		writeJSON(w, 400, encodeError(nil, codec.NewError(codec.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required")))
		return nil
	}
	ss, err := s.lookup(req.Context(), principalOf(principal), id)
	switch {
	case err == nil:
		return ss
	case errors.Is(err, state.ErrNotFound):
		s.stats.UnknownSession.Add(1)
		writeJSON(w, 404, encodeError(nil, codec.NewError(-32001, "Session not found")))
	default:
		s.stats.Unavailable.Add(1)
		s.log.Warn("legacy session store", "err", err)
		writeJSON(w, 503, encodeError(nil, storeError(err)))
	}
	return nil
}

// checkVersionHeader: a request after initialize carries the negotiated
// revision; none means 2025-03-26 (allowed on this legacy path, LEG-09).
func (s *Server) checkVersionHeader(w http.ResponseWriter, req *http.Request) bool {
	v := req.Header.Get(HeaderProtocol)
	if v == "" || slices.Contains(Versions, v) {
		return true
	}
	s.bad(w, 400, nil, codec.NewError(codec.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+v))
	return false
}

func accepts(req *http.Request, types ...string) bool {
	h := strings.Join(req.Header.Values("Accept"), ",")
	if h == "" {
		return true
	}
	for _, part := range strings.Split(h, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if mt == "*/*" || slices.Contains(types, mt) {
			return true
		}
	}
	return false
}

// contentTypeJSON reports whether req's body is declared application/json.
func contentTypeJSON(req *http.Request) bool {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

func (s *Server) post(w http.ResponseWriter, req *http.Request, principal any) {
	if !contentTypeJSON(req) {
		s.bad(w, 415, nil, codec.NewError(codec.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json"))
		return
	}
	if !accepts(req, "application/json", "text/event-stream") {
		s.bad(w, 406, nil, codec.NewError(codec.CodeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, int64(s.cfg.MaxBodyBytes)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.stats.BadRequests.Add(1)
			s.stats.TooLarge.Add(1)
			w.WriteHeader(413)
			return
		}
		s.bad(w, 400, nil, codec.ErrParse)
		return
	}
	m, perr := parse(body)
	if perr != nil {
		s.bad(w, 400, nil, perr)
		return
	}
	if m.Method == "initialize" {
		s.initialize(w, req, m, principal)
		return
	}
	ss := s.session(w, req, principal)
	if ss == nil || !s.checkVersionHeader(w, req) {
		return
	}
	switch {
	case m.Method == "" && len(m.ID) > 0: // a response to a server→client request
		s.deliver(ss, m)
		w.WriteHeader(202)
	case m.Method == "":
		s.bad(w, 400, nil, errNotRPC)
	case len(m.ID) == 0: // a notification
		s.notification(ss, m)
		w.WriteHeader(202)
	default:
		s.stats.Requests.Add(1)
		s.request(w, req, ss, m, principal)
	}
}

// initialize creates a session: the engine's server/discover supplies the
// capabilities, serverInfo and instructions (written once, served to
// both eras).
func (s *Server) initialize(w http.ResponseWriter, req *http.Request, m *wire, principal any) {
	if len(m.ID) == 0 {
		s.bad(w, 400, nil, codec.NewError(codec.CodeInvalidRequest, "Invalid Request: initialize must be a request"))
		return
	}
	var p initParams
	if len(m.Params) > 0 {
		if err := codec.Unmarshal(m.Params, &p); err != nil {
			s.bad(w, 400, m.ID, errBadParam)
			return
		}
	}
	if p.ProtocolVersion == "" {
		s.bad(w, 400, m.ID, codec.NewError(codec.CodeInvalidParams, "Invalid params: protocolVersion is required"))
		return
	}
	rec := p.record()
	res, err := s.initResult(req.Context(), rec.Version)
	if err != nil {
		s.log.Error("legacy initialize: server/discover failed", "err", err)
		writeJSON(w, 200, encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Internal error")))
		return
	}
	owner := ownerOf(principal) // "": anonymous, also a principal without an identity
	ip := ""                    // an authenticated caller is bounded per principal, not per IP
	if owner == "" {
		ip = s.callerIP(req)
	}
	ss, err := s.create(req.Context(), principalOf(principal), owner, ip, rec)
	switch {
	case errors.Is(err, errTooManyForPrincipal), errors.Is(err, errTooManyForIP):
		// One caller's bound (F5): the others are still served.
		limit, what := "sessions_per_principal", "this principal"
		if errors.Is(err, errTooManyForIP) {
			limit, what = "sessions_per_ip", "this client IP"
		}
		e := codec.NewError(codec.CodeInternalError, "Too many sessions for "+what+"; end one or try again later")
		e.Data = []byte(`{"limit":"` + limit + `","retryAfter":` + sessionRetryAfter + `}`)
		w.Header().Set("Retry-After", sessionRetryAfter)
		writeJSON(w, 429, encodeError(m.ID, e))
		return
	case errors.Is(err, errTooMany):
		w.Header().Set("Retry-After", "10")
		writeJSON(w, 503, encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Too many sessions; try again later")))
		return
	case err != nil:
		s.stats.Unavailable.Add(1)
		s.log.Warn("legacy session store", "err", err)
		writeJSON(w, 503, encodeError(m.ID, codec.NewError(codec.CodeInternalError, "Session store unavailable")))
		return
	}
	w.Header().Set(HeaderSession, ss.id)
	writeJSON(w, 200, encodeResponse(m.ID, res))
}

// sessionRetryAfter is the Retry-After, in seconds, of an initialize
// refused by a per-caller session bound: a slot frees when one of the
// caller's sessions is deleted or expires.
const sessionRetryAfter = "10"

// callerIP is what names an anonymous caller of req for the per-IP
// session bound and the engine's per-caller limits: the host of its
// RemoteAddr, except a loopback one, which names no caller — the
// operator's own tools, or a reverse proxy on the host that brings every
// client from one address (as on the modern endpoint; see docs/limits.md).
// "" when it names none.
func (s *Server) callerIP(req *http.Request) string {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		host = req.RemoteAddr
	}
	return netutil.CallerIP(host, s.countLoopback)
}

// initResult builds the InitializeResult from the engine's server/discover.
func (s *Server) initResult(ctx context.Context, version string) ([]byte, error) {
	msg := []byte(`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":` +
		string(quote(s.modern)) + `,"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	c := newCall()
	if e := s.start(ctx, msg, c, nil, "", nil, nil); e != nil {
		return nil, e
	}
	out, err := c.wait(ctx)
	if err != nil {
		return nil, err
	}
	var r response
	if err := codec.Unmarshal(out.frame, &r); err != nil || len(r.Result) == 0 {
		return nil, errors.New("legacy: server/discover gave no result")
	}
	var d struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		Instructions string                     `json:"instructions,omitempty"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	if err := codec.Unmarshal(r.Result, &d); err != nil {
		return nil, err
	}
	if d.Capabilities == nil {
		d.Capabilities = map[string]json.RawMessage{}
	}
	if s.eng.Config().Logging {
		d.Capabilities["logging"] = json.RawMessage(`{}`)
	}
	res := struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage            `json:"serverInfo"`
		Instructions    string                     `json:"instructions,omitempty"`
	}{version, d.Capabilities, d.Meta[keyServerInfo], d.Instructions}
	return codec.Marshal(res)
}

// wait blocks until the call's reply (notifications are dropped).
func (c *call) wait(ctx context.Context) (*outcome, error) {
	for {
		_, reply, done := c.take()
		if reply != nil {
			return reply, nil
		}
		if done {
			return nil, errors.New("legacy: request ended without a reply")
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			c.cancelNow(ctx.Err())
			return nil, ctx.Err()
		}
	}
}

// notification handles what a 2025 client announces.
func (s *Server) notification(ss *session, m *wire) {
	switch m.Method {
	case "notifications/cancelled":
		id, ok := codec.LookupPath(m.Params, "requestId")
		if !ok {
			return
		}
		ss.mu.Lock()
		var ref engine.RequestRef
		if c := ss.calls.get(string(id)); c != nil {
			ref = c.claim(errCancelledByClient)
		}
		ss.mu.Unlock()
		ref.Cancel(errCancelledByClient)
	default:
		// notifications/initialized, roots/list_changed and the rest
		// change nothing here: every request carries the session's
		// capabilities anyway.
	}
}

var errCancelledByClient = errors.New("legacy: cancelled by the client")

// deliver hands a client's response to the request waiting for it.
func (s *Server) deliver(ss *session, m *wire) {
	ss.mu.Lock()
	ch := ss.pending[string(m.ID)]
	delete(ss.pending, string(m.ID))
	ss.mu.Unlock()
	if ch == nil {
		s.stats.StrayResponses.Add(1)
		return
	}
	b, _ := codec.Marshal(m)
	ch <- b
}

// request answers a request of ss: the session's own methods here, the
// rest through the engine.
func (s *Server) request(w http.ResponseWriter, req *http.Request, ss *session, m *wire, principal any) {
	ctx := req.Context()
	if frame, status := s.sessionMethod(ctx, ss, m); frame != nil {
		writeJSON(w, status, frame)
		return
	}
	key := ""
	if ownerOf(principal) == "" {
		key = s.callerIP(req) // an anonymous caller is limited by its IP, as on the modern endpoint
	}
	s.run(ctx, &sse{w: w, rc: http.NewResponseController(w), idle: s.cfg.WriteIdleTimeout, meta: s.cfg.ResourceMetadata}, ss, m, principal, key)
}

func knownLevel(l string) bool {
	switch l {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
		return true
	}
	return false
}

// sse writes one response as JSON or, once anything precedes the final
// answer, as an SSE stream.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	idle    time.Duration
	meta    string // Config.ResourceMetadata, for a 403's challenge
	mu      sync.Mutex
	started bool
	err     error
	stalled bool      // a write failed once the write idle limit had passed
	last    time.Time // start of the previous write
}

// write writes b and flushes, bounded by the write idle limit. A write
// that fails once that limit has passed since the previous write began
// marks the stream stalled: a client that stopped reading (behind the
// fasthttp front end the deadline surfaces as a closed pipe, not as a
// timeout, and possibly only at the next write).
func (e *sse) write(b []byte) error {
	start := time.Now()
	ref := e.last
	if ref.IsZero() {
		ref = start
	}
	e.last = start
	_ = e.rc.SetWriteDeadline(start.Add(e.idle))
	_, err := e.w.Write(b)
	if err == nil {
		err = e.rc.Flush()
	}
	if err != nil {
		e.err = err
		e.stalled = time.Since(ref) >= e.idle*9/10
	}
	return err
}

// stalledErr reports whether the stream ended on a stalled write.
func (e *sse) stalledErr() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stalled
}

func (e *sse) begin() error {
	if e.started {
		return e.err
	}
	e.started = true
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	e.w.WriteHeader(200)
	e.err = e.flush()
	return e.err
}

func (e *sse) flush() error {
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.idle))
	return e.rc.Flush()
}

// event writes one message event.
func (e *sse) event(frame []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.begin(); err != nil {
		return err
	}
	buf := make([]byte, 0, len(frame)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, frame...)
	buf = append(buf, "\n\n"...)
	return e.write(buf)
}

func (e *sse) comment() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.begin(); err != nil {
		return err
	}
	return e.write([]byte(": keepalive\n\n"))
}

func (e *sse) finalStatus(frame []byte, status int) {
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	switch {
	case status == 503 && !started:
		writeJSON(e.w, 503, frame)
		return
	case status == 429 && !started:
		// An engine per-caller limit (engine.Config.MaxInFlightPerPrincipal…):
		// its data carries retryAfter, in seconds.
		retry := "1"
		if v, ok := codec.LookupPath(frame, "error", "data", "retryAfter"); ok {
			retry = string(v)
		}
		e.w.Header().Set("Retry-After", retry)
		writeJSON(e.w, 429, frame)
		return
	case status == 403 && !started:
		// A per-tool scope the token lacks (auth.Verifier's Middleware):
		// the 2025-11-25 authorization spec's step-up challenge.
		if ch := scopeChallenge(frame, e.meta); ch != nil {
			e.w.Header().Set("WWW-Authenticate", string(ch))
		}
		writeJSON(e.w, 403, frame)
		return
	}
	e.final(frame)
}

// final writes the response: a JSON body unless the stream has begun.
func (e *sse) final(frame []byte) {
	e.mu.Lock()
	started := e.started
	e.mu.Unlock()
	if !started {
		writeJSON(e.w, 200, frame)
		return
	}
	_ = e.event(frame)
}

// storeError is the answer to a session store failure: unavailable (503),
// saying so when the store lost its data (state.ErrLost: a restart), so
// that the client re-initializes rather than retrying a session that is
// gone (F9).
func storeError(err error) *codec.Error {
	if errors.Is(err, state.ErrLost) {
		return codec.NewError(codec.CodeInternalError, "Session store lost its data (restarted): this session may be gone; initialize again if retrying fails")
	}
	return codec.NewError(codec.CodeInternalError, "Session store unavailable")
}

// scopeChallenge is the WWW-Authenticate value answering an error whose
// data names the scopes the call needs ({"scope": "a b"}, as
// auth.Verifier's Middleware refuses a tool): Bearer
// error="insufficient_scope" with that scope, and resource_metadata when
// meta is set (SEC-04); nil without a scope. A scope or meta that is not
// plain printable ASCII is left out (RFC 6749 §3.3 scope tokens are), so
// nothing a header could not carry is ever quoted into one.
func scopeChallenge(frame []byte, meta string) []byte {
	raw, ok := codec.LookupPath(frame, "error", "data", "scope")
	if !ok || len(raw) < 3 || raw[0] != '"' {
		return nil
	}
	scope := raw[1 : len(raw)-1]
	if !quotable(string(scope)) {
		return nil
	}
	ch := append([]byte(`Bearer error="insufficient_scope", scope="`), scope...)
	ch = append(ch, '"')
	if meta != "" && quotable(meta) {
		ch = append(append(append(ch, `, resource_metadata="`...), meta...), '"')
	}
	return ch
}

// quotable reports whether s can go between the quotes of a header's
// quoted-string as it is: printable ASCII without '"' or '\\'.
func quotable(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b > 0x7e || b == '\\' || b == '"' {
			return false
		}
	}
	return true
}
