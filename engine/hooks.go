package engine

import (
	"context"
	"errors"
	"net"

	"github.com/mcpwire/mcpwire/codec"
)

// This file holds the engine's extension points: lifecycle hooks
// (connections, calls, listen streams), the middleware chain around
// dispatch, the per-principal tool filter, the request's transport headers
// and values a hook attaches to a call. Each is free when unused: the hot
// path tests one pointer (or one nil func) and allocates nothing.

// Hooks are callbacks on the life of connections, calls and listen
// streams, on every transport. A nil field is not called; a Server whose
// Config.Hooks has no field set pays one nil check per request. Hooks run
// on the goroutine where the event happens (a transport's reader or event
// loop, a worker, a canceller), so they must be quick and must not block;
// they must not keep the Call (or ConnInfo fields other than Data) past
// their return. Combine several sets with JoinHooks.
type Hooks struct {
	// ConnStart runs when a transport accepts a connection: the stdio
	// process's stdin/stdout pair, each TCP or Unix socket connection,
	// each HTTP connection of the fasthttp front end and of an
	// http.Server serving through Server.NetListener (streamhttp). A hook
	// may keep its own state in ci.Data.
	ConnStart func(ci *ConnInfo)
	// ConnEnd runs once when that connection has ended; err says why when
	// the transport knows (nil: closed normally).
	ConnEnd func(ci *ConnInfo, err error)

	// CallStart runs once per request that reached validation, before its
	// handler (and before the request is answered when validation refused
	// it): every request gets one CallStart and, later, one CallEnd. It may
	// attach values for the handler with Call.SetValues (a trace span).
	// Messages refused before they became a request get neither: lines
	// that are not JSON-RPC, notifications, and HTTP requests refused by
	// their headers (404, 405, 403, 401, 415, 406, 413) or body (400);
	// the transports count those in their Stats.
	CallStart func(c *Call)
	// CallEnd runs once the request has ended — answered, cancelled, timed
	// out and its handler returned, or its listen stream closed — with
	// what became of it.
	CallEnd func(c *Call, o Outcome)

	// ListenStart runs when a subscriptions/listen request opens its
	// stream (its filter was valid; the acknowledgement, SUB-03, follows);
	// ListenEnd when the stream ends (before the call's CallEnd), with the
	// same Outcome.
	ListenStart func(c *Call)
	ListenEnd   func(c *Call, o Outcome)
}

func (h *Hooks) empty() bool {
	return h.ConnStart == nil && h.ConnEnd == nil && h.CallStart == nil && h.CallEnd == nil &&
		h.ListenStart == nil && h.ListenEnd == nil
}

// JoinHooks returns hooks that run each set's callbacks in order (the end
// callbacks in reverse order, so that the first set wraps the others).
func JoinHooks(sets ...Hooks) Hooks {
	var out Hooks
	for i := range sets {
		h := sets[i]
		out.ConnStart = chain1(out.ConnStart, h.ConnStart)
		out.ConnEnd = chain2(out.ConnEnd, h.ConnEnd)
		out.CallStart = chain1(out.CallStart, h.CallStart)
		out.CallEnd = chain2(out.CallEnd, h.CallEnd)
		out.ListenStart = chain1(out.ListenStart, h.ListenStart)
		out.ListenEnd = chain2(out.ListenEnd, h.ListenEnd)
	}
	return out
}

func chain1[T any](a, b func(T)) func(T) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(v T) { a(v); b(v) }
}

// chain2 runs b before a: end callbacks unwind in reverse order.
func chain2[T, U any](a, b func(T, U)) func(T, U) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(v T, u U) { b(v, u); a(v, u) }
}

// ConnInfo describes one connection for Hooks and for handlers
// (Call.Conn). The transport fills it before ConnStart and does not change
// it afterwards.
type ConnInfo struct {
	// Transport is "stdio", "tcp", "unix" or "http". (Without hooks no
	// ConnInfo exists, and Call.Transport falls back to the scope's name:
	// "socket" for both socket networks.)
	Transport string
	// RemoteAddr and LocalAddr are the connection's addresses ("" for
	// stdio). Behind a trusted proxy (streamhttp.Config.TrustedProxies)
	// RemoteAddr is the proxy's, as accepted.
	RemoteAddr, LocalAddr string
	// Data is the hooks' own: set it in ConnStart, read it in later hooks.
	Data any
}

// ConnOpen tells the hooks that the scope's transport accepted a
// connection and returns its ConnInfo (Transport: the scope's name), or
// nil (doing nothing) when no hook is set. Transports call it once per
// connection and, with a non-nil result, ConnClose once when the
// connection ends.
func (sc *Scope) ConnOpen(local, remote net.Addr) *ConnInfo {
	h := sc.srv.hooks
	if h == nil {
		return nil
	}
	ci := &ConnInfo{Transport: sc.transport}
	if local != nil {
		ci.LocalAddr = local.String()
	}
	if remote != nil {
		ci.RemoteAddr = remote.String()
	}
	if h.ConnStart != nil {
		h.ConnStart(ci)
	}
	return ci
}

// ConnClose tells the hooks that the connection ci (from ConnOpen) ended;
// it does nothing for a nil ci.
func (sc *Scope) ConnClose(ci *ConnInfo, err error) {
	h := sc.srv.hooks
	if ci == nil || h == nil || h.ConnEnd == nil {
		return
	}
	h.ConnEnd(ci, err)
}

// EndReason says why a request ended.
type EndReason uint8

const (
	// EndOK: a result was sent (Outcome.ResultType; a tool's isError
	// result is Outcome.ToolError).
	EndOK EndReason = iota
	// EndError: a JSON-RPC error was sent (Outcome.Code), from validation,
	// a middleware, the tool filter or the handler.
	EndError
	// EndCancelled: the peer cancelled it (notifications/cancelled) or the
	// transport gave up on it (a slow consumer); Outcome.Cause says which.
	EndCancelled
	// EndDisconnect: the connection went away while it ran.
	EndDisconnect
	// EndShutdown: the server (or the transport) shut down: refused, ended
	// at the shutdown deadline, or a listen stream completed by Shutdown
	// or Drain (then with its final result).
	EndShutdown
	// EndTimeout: the tool's timeout passed; -32603 "Request timed out"
	// was sent.
	EndTimeout
)

var reasonNames = [...]string{"ok", "error", "cancelled", "disconnect", "shutdown", "timeout"}

func (r EndReason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}

// Outcome is what became of a request, for CallEnd and ListenEnd.
type Outcome struct {
	Reason EndReason
	// Code is the JSON-RPC error code sent (EndError, EndTimeout, and a
	// shutdown refusal), else 0.
	Code codec.Code
	// Status is the HTTP status of the answer (200 for results and in-band
	// errors; 0 when nothing was sent).
	Status int
	// ResultType is "complete" or "input_required" when a result was sent.
	ResultType string
	// ToolError reports a tool result with isError true.
	ToolError bool
	// Cause is why the request was cancelled (EndCancelled, EndDisconnect,
	// EndShutdown), when known.
	Cause error
}

// ErrDisconnected is the cause (errors.Is) of requests cancelled because
// their connection went away: the transports cancel with an error wrapping
// it, so that Outcome and Call.Cause tell a disconnect from a cancellation.
var ErrDisconnected = errors.New("engine: connection closed")

// Disconnected returns an error that is why (its message) and also
// ErrDisconnected for errors.Is: the cause a transport gives requests it
// cancels because their connection is gone.
func Disconnected(why error) error {
	if why == nil || errors.Is(why, ErrDisconnected) {
		if why == nil {
			return ErrDisconnected
		}
		return why
	}
	return &disconnected{why}
}

type disconnected struct{ why error }

func (d *disconnected) Error() string   { return d.why.Error() }
func (d *disconnected) Unwrap() []error { return []error{ErrDisconnected, d.why} }

// result kinds of a Call (what out holds), for Outcome.
type resultKind uint8

const (
	kindNone resultKind = iota
	kindComplete
	kindToolError
	kindInputRequired
	kindError
)

func (c *Call) outcome() Outcome {
	o := Outcome{}
	switch {
	case c.dl.timedOut:
		o.Reason, o.Code, o.Status = EndTimeout, ErrTimedOut.Code, ErrTimedOut.HTTPStatus()
		return o
	case c.state == stateCancelled:
		o.Cause = c.err
		switch {
		case errors.Is(c.err, ErrDisconnected):
			o.Reason = EndDisconnect
		case errors.Is(c.err, errShutdown) || c.srv.closing.Load():
			o.Reason = EndShutdown
		default:
			o.Reason = EndCancelled
		}
		return o
	}
	o.Status = c.status
	switch c.rkind {
	case kindError:
		o.Reason, o.Code = EndError, c.code
		if c.code == errShuttingDown.Code && c.refused {
			o.Reason = EndShutdown
		}
		return o
	case kindInputRequired:
		o.ResultType = "input_required"
	default:
		o.ResultType = "complete"
		o.ToolError = c.rkind == kindToolError
	}
	if c.serverEnded {
		o.Reason = EndShutdown
	}
	return o
}

// hookStart runs CallStart once.
func (c *Call) hookStart(h *Hooks) {
	if c.hooked {
		return
	}
	c.hooked, c.rare = true, true
	if h.CallStart != nil {
		h.CallStart(c)
	}
}

// hookEnd runs ListenEnd and CallEnd for a call that ran hookStart.
func (c *Call) hookEnd(h *Hooks) {
	if h.CallEnd == nil && (h.ListenEnd == nil || !c.listening) {
		return
	}
	o := c.outcome()
	if c.listening && h.ListenEnd != nil {
		h.ListenEnd(c, o)
	}
	if h.CallEnd != nil {
		h.CallEnd(c, o)
	}
}

// Middleware -----------------------------------------------------------------

// HandlerFunc is the engine's dispatch of one request to its method's
// handler (a tool's, a prompt's, the cached list results, …).
type HandlerFunc func(c *Call) error

// Middleware wraps dispatch: Config.Middleware[0] is the outermost. It
// runs for every request that passed validation (and the tool filter), on
// the goroutine that runs the handler — for Inline tools and the cached
// list methods the transport's reader or event loop, where it must not
// block — and may:
//
//   - call next(c) and return its error unchanged (observe: timing, audit
//     logs) — the error may be an internal sentinel (a listen stream that
//     stays open after its handler returns), so never wrap it;
//   - not call next and return a *codec.Error (refuse: policy, per-principal
//     rate limits), which becomes the JSON-RPC error answer, with the HTTP
//     status of its Status field (for example 429 with a -32000 code);
//   - not call next and set a result itself (c.Text, c.Return …).
//
// c.Method, c.Name, c.URI, c.Principal, c.Header and c.Conn tell it what
// the request is and who sent it. Like a handler it must not keep c.
type Middleware func(next HandlerFunc) HandlerFunc

func baseDispatch(c *Call) error { return c.method.handle(c) }

func buildChain(mw []Middleware) HandlerFunc {
	if len(mw) == 0 {
		return nil
	}
	h := HandlerFunc(baseDispatch)
	for i := len(mw) - 1; i >= 0; i-- {
		if mw[i] != nil {
			h = mw[i](h)
		}
	}
	return h
}

// ToolFilter decides whether the caller of c sees tool t: in tools/list
// (hidden tools are left out) and in tools/call (a hidden tool gets the
// same -32602 "Unknown tool" error as one that does not exist). It runs
// during validation (c.Principal, c.Header, c.Conn and the request's
// members are set; the handler has not run) and must be quick and pure: it
// is called once per registered tool for every tools/list.
type ToolFilter func(c *Call, t *Tool) bool

// errUnknownTool is the answer for a tools/call naming a tool that does
// not exist or that the caller may not see.
func (c *Call) errUnknownTool() *codec.Error {
	return codec.NewError(codec.CodeInvalidParams, "Unknown tool: "+c.env.Name.String())
}

// Headers ----------------------------------------------------------------

// Headers is how a transport lends a request's headers (HTTP) to its
// handler, without exposing the transport's own types. Slices it returns
// are read-only and valid until the handler returns.
type Headers interface {
	// LookupHeader returns the first value of the header name
	// (case-insensitive) and whether the request had one.
	LookupHeader(name string) ([]byte, bool)
	// VisitHeaders calls f for each header line in order until f returns
	// false.
	VisitHeaders(f func(name, value []byte) bool)
}

// SetHeaders lends the request's transport headers to the handler
// (Call.Header). h must stay valid until the request ends.
func (r *Request) SetHeaders(h Headers) { r.c.hdrs, r.c.rare = h, true }

// HeadersLender is implemented by a Replier that lends its request's
// headers when they are asked for: a request without SetHeaders gets
// them from its Replier (Call.HeaderBytes, Call.VisitHeaders). A
// transport whose every request has headers spares the store and the
// release of SetHeaders that way. The Headers returned must stay valid
// until the request ends; nil means none.
type HeadersLender interface {
	RequestHeaders(r *Request) Headers
}

// SetConn links the request to its connection (Call.Conn); ci may be nil.
func (r *Request) SetConn(ci *ConnInfo) { r.c.conn, r.c.rare = ci, true }

// HeaderBytes returns the first value of the request's header name
// (case-insensitive) and whether it was sent; (nil, false) on transports
// without headers (stdio, sockets). The slice is read-only and valid until
// the handler returns. It does not allocate.
func (c *Call) HeaderBytes(name string) ([]byte, bool) {
	h := c.headers()
	if h == nil {
		return nil, false
	}
	return h.LookupHeader(name)
}

// headers is the request's Headers: SetHeaders', else its Replier's
// (HeadersLender), else nil.
func (c *Call) headers() Headers {
	if c.hdrs != nil {
		return c.hdrs
	}
	if l, ok := c.rep.(HeadersLender); ok {
		return l.RequestHeaders(&c.self)
	}
	return nil
}

// Header returns the first value of the request's header name
// (case-insensitive), or "" (a copy, safe to keep).
func (c *Call) Header(name string) string {
	v, _ := c.HeaderBytes(name)
	return string(v)
}

// VisitHeaders calls f for each of the request's header lines in order
// until f returns false; it does nothing on transports without headers.
// The slices are read-only and valid until the handler returns.
func (c *Call) VisitHeaders(f func(name, value []byte) bool) {
	if h := c.headers(); h != nil {
		h.VisitHeaders(f)
	}
}

// Conn returns the request's connection as reported to the hooks, or nil
// (no Hooks set, or a transport that does not report connections).
func (c *Call) Conn() *ConnInfo { return c.conn }

// Transport returns the name of the transport that carried the request:
// "stdio", "tcp", "unix", "http", or the name a custom transport gave its
// scope (NewScope; "" when unknown).
func (c *Call) Transport() string {
	if c.conn != nil {
		return c.conn.Transport
	}
	if c.scope != nil {
		return c.scope.transport
	}
	return ""
}

// IsListen reports whether the call is a subscriptions/listen stream.
func (c *Call) IsListen() bool { return c.method != nil && c.method == listenMethod }

// ResultType returns "complete" or "input_required" once a result has been
// set, "error" for an error answer, or "".
func (c *Call) ResultType() string {
	switch c.rkind {
	case kindComplete, kindToolError:
		return "complete"
	case kindInputRequired:
		return "input_required"
	case kindError:
		return "error"
	}
	return ""
}

// Values ------------------------------------------------------------------

// SetValues makes the Call's Value look keys up in ctx instead of the
// transport's parent context: for a hook or middleware that attaches
// values to the request (a trace span: ctx = trace.ContextWithSpan(
// c.ValueContext(), span)). Only ctx's values are used; its deadline and
// cancellation are ignored (the Call keeps its own). ctx must not be
// derived from c itself.
func (c *Call) SetValues(ctx context.Context) { c.values, c.rare = ctx, true }

// ValueContext returns the context the Call's Value reads: what SetValues
// set, else the transport's parent context. Derive from it, not from the
// Call, to add values with SetValues.
func (c *Call) ValueContext() context.Context {
	if c.values != nil {
		return c.values
	}
	return c.parent
}
