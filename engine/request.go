package engine

import (
	"context"
	"sync/atomic"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// This file is the binding-facing side of the engine: what a transport
// (stdio, sockets, HTTP, or one written by a user) needs to turn framed
// messages into requests and to carry their answers back. Handlers never
// see any of it: they get a *Call.

// Replier is a transport's outbound side for one request. The engine calls
// Notify zero or more times (progress, log and listen-stream notifications),
// then Reply at most once (not at all when the request was cancelled), then
// Done exactly once. frame is one complete JSON-RPC message without a
// trailing newline, valid only during the call. Implementations must be safe
// for use from several goroutines (a progress timer may call Notify), must
// not block for long (the engine may hold the request's lock, see LOCKS.md)
// and must not call back into the same Request.
type Replier interface {
	Notify(r *Request, frame []byte) error
	// Reply delivers the final response; status is the HTTP status of the
	// ERR table (200 for results and in-band errors).
	Reply(r *Request, frame []byte, status int) error
	// Done releases the transport's per-request state. After Done the
	// Request is recycled.
	Done(r *Request)
}

// KeyedNotifier is implemented by Repliers that queue notifications: a
// notification whose key equals one still waiting in the queue may be
// dropped, so that repeated updates of the same URI (or repeated list
// changes) collapse into one while a listener is behind.
type KeyedNotifier interface {
	NotifyKeyed(r *Request, frame []byte, key uint64) error
}

// Request is the transport's handle on one request in flight: the same
// request a handler sees as a *Call, with the operations only a binding
// needs — validation steps, start, failure, raw results, cancellation and
// per-request transport state. A transport gets one from Scope.Begin, then
// runs Check (or its steps), and either Fail or Start/Run. Like a Call, a
// Request is recycled after its Replier's Done returns; keep a RequestRef
// where the request may end concurrently with its use.
//
// A Request is a distinct type, not a conversion of Call: a handler holds
// a *Call and has no way to reach these operations from it.
type Request struct {
	c *Call // set once, when the Call is allocated
}

// Call returns the handler's view of the request.
func (r *Request) Call() *Call { return r.c }

// Envelope returns the peeked request. Its slices alias the request's own
// copy of the message, and may have room past their ends (on the line
// transports, over the next requests of the same read): read them, never
// append to them. The Call's accessors hand out slices without that room.
func (r *Request) Envelope() *codec.Envelope { return &r.c.env }

// Server returns the engine serving the request.
func (r *Request) Server() *Server { return r.c.srv }

// Check runs every validation step in order: CheckMeta, CheckVersion,
// CheckMethod, CheckTarget, CheckCapabilities. The HTTP binding interleaves
// its header checks between the steps (HVAL-02).
func (r *Request) Check() *codec.Error { return r.c.check() }

// CheckKept reports whether the request's Call holds the outcome of
// CheckVersion, CheckMethod and CheckTarget for this message: a message a
// PeekMemo template took (codec.Envelope.Template) whose template's
// check the Call kept, in the registry as it still is. The method and
// the tool are then set as CheckTarget sets them, and a transport that
// runs the steps one by one (HVAL-02) may leave those three out;
// CheckMeta, CheckCapabilities and its own header checks still run. It
// decides nothing the three steps would not: false sends the transport
// to them.
func (r *Request) CheckKept() bool {
	c := r.c
	if !c.tmplHit() {
		return false
	}
	c.method, c.tool = toolsCallMethod, c.tc.tool
	return true
}

// CheckMeta enforces META-02/03: params._meta carries the protocol version
// and the client capabilities (an initialize without a modern claim gets
// -32022 naming the served versions: DISC-05, our choice).
//
// A message a template took (codec.Envelope.Template) has both keys and
// no logLevel: decided here, in the caller, without a call.
func (r *Request) CheckMeta() *codec.Error {
	if r.c.env.Template() != 0 {
		return nil
	}
	return r.c.checkMeta()
}

// CheckVersion enforces DISC-04.
func (r *Request) CheckVersion() *codec.Error { return r.c.checkVersion() }

// CheckMethod routes the method: unknown, removed and capability-gated
// methods get -32601 (HDR-08, DISC-08).
func (r *Request) CheckMethod() *codec.Error { return r.c.checkMethod() }

// CheckTarget checks the method's target: the tool named by params.name
// exists, prompts/get has a name, resources/read has a uri, a list
// method's cursor is one of its list's.
func (r *Request) CheckTarget() *codec.Error { return r.c.checkTarget() }

// CheckCapabilities enforces META-08 for the target found by CheckTarget.
// A tool that requires no client capability is decided here, in the
// caller, without a call.
func (r *Request) CheckCapabilities() *codec.Error {
	if t := r.c.tool; t != nil && len(t.RequiredClientCapabilities) == 0 {
		return nil
	}
	return r.c.checkCapabilities()
}

// Tool returns the tool a tools/call targets (after CheckTarget), or nil.
func (r *Request) Tool() *Tool { return r.c.tool }

// Method returns the method name.
func (r *Request) Method() string { return r.c.Method() }

// IsListen reports whether the request is a subscriptions/listen stream
// (after CheckMethod).
func (r *Request) IsListen() bool { return r.c.method != nil && r.c.method == listenMethod }

// Fail answers the request with e (status from e) and ends it: for
// validation failures before Start.
func (r *Request) Fail(e *codec.Error) { r.c.fail(e) }

// Start runs the handler: cheap methods and Inline tools on the caller's
// goroutine (see Inline), the rest on a pooled worker. The response reaches
// the Replier; then Done is called. The request may be recycled before
// Start returns.
func (r *Request) Start() { r.c.start() }

// Inline reports whether Start will run the handler on the caller's
// goroutine (and so return only after Done).
func (r *Request) Inline() bool {
	c := r.c
	return c.method != nil && c.inline()
}

// StartInline is Start for a request that Inline reports and that has no
// timeout (HasTimeout), in one call: it runs the request to its end on the
// caller's goroutine and reports true. Any other request is left as it
// was, not started, and it reports false.
func (r *Request) StartInline() bool { return r.c.runInline(true) }

// Run is Start on the caller's goroutine: the handler runs, the response
// reaches the Replier, Done is called, and only then does Run return.
// The one exception is a request that detaches (a subscriptions/listen
// stream): Run returns while it lives on, and its Done comes later from
// another goroutine. Such a request always reports MayNotify and never
// Inline, so a transport that Runs only Inline requests and those that
// cannot notify (streamhttp) never sees the exception (TestListenMayNotify).
func (r *Request) Run() { r.c.runNow() }

// MayNotify reports whether the request can produce notifications before
// its response: it asked for progress (progressToken), for log messages
// (logLevel, with Config.Logging), or is a listen stream.
func (r *Request) MayNotify() bool { return r.c.mayNotify() }

// HasTimeout reports whether the request will be answered by a timeout
// even if its handler never returns; such a request must not run on a
// goroutine that has to write the answer.
func (r *Request) HasTimeout() bool { return r.c.hasTimeout() }

// SetRawResult sets an already encoded result object, which must carry
// resultType (and should carry _meta serverInfo, see Scope.ServerMeta).
func (r *Request) SetRawResult(obj []byte) { r.c.setRawResult(obj) }

// ReplyEscaped reports whether frame, the response handed to
// BatchReplier.ReplyInBatch, was written entirely by the engine's own
// encoders from values they escaped (Call.Text and its kin, a typed tool's
// result in its flat form): such a frame holds no raw newline, and a line
// transport need not look for one. False means it may (a raw result,
// Return's or a cache's encoding): look. Call it only from ReplyInBatch,
// with the frame given there.
func (r *Request) ReplyEscaped(frame []byte) bool {
	c := r.c
	return c.esc == len(frame) && len(frame) > 0 && unsafe.SliceData(frame) == unsafe.SliceData(c.out)
}

// SwapReply trades frame, the response Replier.Reply was handed, for buf:
// when frame is the request's own response buffer (the usual frame of
// Reply; never a timeout's, nor one written in a batch's stage), buf,
// emptied, becomes that buffer and SwapReply reports true. The transport
// then owns frame's array for good (it may keep it as the body it sends,
// without a copy) and must no longer touch buf's. Otherwise nothing
// changes and it reports false: frame is still valid only during Reply.
// Call it only from Reply, on the goroutine that called it, with its frame.
func (r *Request) SwapReply(frame, buf []byte) bool {
	c := r.c
	if len(frame) == 0 || c.stagedCap != 0 || unsafe.SliceData(frame) != unsafe.SliceData(c.out) {
		return false
	}
	c.out = buf[:0]
	return true
}

// SetTransportData keeps the transport's per-request state with the
// request (cleared when it is recycled).
func (r *Request) SetTransportData(v any) { r.c.tdata, r.c.rare = v, true }

// TransportData returns what SetTransportData stored.
func (r *Request) TransportData() any { return r.c.tdata }

// Ref returns a reference to this request that stays safe to use after the
// request has ended. Like every method of Request, call it while the
// request has not ended (it is recycled after its Replier's Done); taken
// in its Replier's Reply or Done, it names the request that has just
// completed, so it acts on nothing.
func (r *Request) Ref() RequestRef {
	// No lock: the generation changes only when the request completes
	// (under c.mu, before its Reply, on the goroutine that then runs Reply
	// and Done), and the caller holds a request that has not been recycled
	// (the pool's Get and Put, or the batch's spare, order the previous
	// request's change before this read). Others read it under c.mu; reads
	// do not race.
	c := r.c
	gen := c.gen
	if c.ended {
		gen-- // completed: gen already names the Call's next request
	}
	return RequestRef{c, gen}
}

// RequestRef names one request: it stays safe to use after the Request has
// been recycled for another request (its methods then do nothing).
// Transports keep a RequestRef where the request may end concurrently with
// their use of it.
type RequestRef struct {
	c   *Call
	gen uint64
}

// Valid reports whether r names a request at all (the zero RequestRef
// names none).
func (r RequestRef) Valid() bool { return r.c != nil }

// Cancel cancels the request, counted as cancelled by its peer, if it is
// still the one referred to and still running: a notifications/cancelled,
// a client disconnect, a slow consumer. It reports whether it did.
func (r RequestRef) Cancel(why error) bool {
	if r.c == nil {
		return false
	}
	c := r.c
	c.mu.Lock()
	if c.gen != r.gen || c.state != stateRunning {
		c.mu.Unlock()
		return false
	}
	c.srv.stats.Cancelled.Add(1)
	return c.cancelLocked(why)
}

// Abort is Cancel without counting: the server ends the request itself
// (connection teardown, the end of a grace period, shutdown).
func (r RequestRef) Abort(why error) {
	if r.c != nil {
		r.c.cancelGen(r.gen, why)
	}
}

// EndStream completes the request with its final result if it is an open
// subscriptions/listen stream (SUB-10: the server ends the stream, the
// client sees resultType "complete"); it reports whether it was one.
func (r RequestRef) EndStream() bool {
	if r.c == nil {
		return false
	}
	c := r.c
	c.mu.Lock()
	if c.gen != r.gen || !c.detached || c.detachDone {
		c.mu.Unlock()
		return false
	}
	sub := c.sub
	c.mu.Unlock()
	c.finishDetached(true, sub)
	return true
}

// Scope is a transport's handle on the engine: the requests it begins are
// its own, so that the transport can be shut down without stopping the
// engine or the other transports, and it is the transport's only door to
// the engine (connections for the hooks, the server's _meta). Create one
// per transport (or per listener) with NewScope. The embedder's
// *Server has none of these methods.
type Scope struct {
	srv       *Server
	transport string      // the name given to NewScope
	closing   bool        // guarded by the tracker's shard locks: set under all of them
	shut      atomic.Bool // closing, read without the locks by a listed Batch
	slot      uint8       // transport label of the duration histograms (metrics.go)
}

// NewScope returns a new scope on srv for a transport named transport
// ("http", "stdio", "tcp", "unix", or a custom transport's own name): the
// name labels its requests in the request-duration histograms and the
// in-flight counts ("other" when transport is ""), and is what
// Call.Transport and ConnInfo.Transport report.
func NewScope(srv *Server, transport string) *Scope {
	sc := &Scope{srv: srv, transport: transport}
	if transport != "" {
		sc.slot = transportSlot(transport)
	}
	return sc
}

// ServerMeta returns the encoded _meta object every result carries
// (serverInfo), for transports that build results themselves
// (Request.SetRawResult). It must not be modified.
func (sc *Scope) ServerMeta() []byte { return sc.srv.serverMeta }

// Server returns the engine.
func (sc *Scope) Server() *Server { return sc.srv }

// Begin prepares a Request for the message msg, whose envelope env was
// filled by codec.Peek from msg. The message is copied, so msg may be
// reused as soon as Begin returns. parent is the request context's parent:
// its values are visible to the handler, and when it can be cancelled
// (Done is not nil) its cancellation cancels the request; transports that
// cancel requests themselves pass a context without Done, which costs
// nothing. principal is what the transport's authentication established
// (nil when unauthenticated); handlers read it with Call.Principal.
func (sc *Scope) Begin(parent context.Context, msg []byte, env *codec.Envelope, rep Replier, principal any) *Request {
	r := sc.begin(parent, env, rep, principal, 0)
	r.c.msg = msg
	r.c.own()
	return r
}

func (sc *Scope) begin(parent context.Context, env *codec.Envelope, rep Replier, principal any, at Stamp) *Request {
	c := callPool.Get().(*Call)
	c.env = *env
	return sc.beginCall(c, parent, rep, principal, at)
}

// beginCall starts c, whose envelope is filled.
func (sc *Scope) beginCall(c *Call, parent context.Context, rep Replier, principal any, at Stamp) *Request {
	c.srv, c.scope, c.rep, c.parent, c.principal = sc.srv, sc, rep, parent, principal
	c.state = stateRunning
	c.status = 200
	if c.t0 = int64(at); at == 0 {
		c.t0 = sc.srv.durStart()
	}
	if parent.Done() != nil {
		c.watchParent(parent)
	}
	return c.req()
}

// watchParent cancels c's request when parent, which can be cancelled,
// is (beginCall).
func (c *Call) watchParent(parent context.Context) {
	gen := c.gen
	c.stopParent = context.AfterFunc(parent, func() { c.cancelGen(gen, context.Cause(parent)) })
}

// BeginBorrowed is Begin without the copy: the request reads msg in
// place, so msg must stay valid and unchanged until the request has ended
// or been handed to another goroutine. The engine copies it itself at that
// point (Start on a worker, a listen stream that outlives its handler), so
// a transport that runs the request to its end before reusing its buffer
// — Inline handlers, validation failures, Run — never pays for the copy.
func (sc *Scope) BeginBorrowed(parent context.Context, msg []byte, env *codec.Envelope, rep Replier, principal any) *Request {
	return sc.BeginBorrowedAt(parent, msg, env, rep, principal, 0)
}

// BeginBorrowedAt is BeginBorrowed with the request's arrival given: at,
// from sc.Now, is where its request-duration histogram starts counting
// (0: now). A transport that reads several messages at once takes one
// reading per read and passes it to each of them, so that a request costs
// one clock read (its end) instead of two; its duration then includes the
// time it waited behind the messages read before it, which is part of the
// latency its client sees.
func (sc *Scope) BeginBorrowedAt(parent context.Context, msg []byte, env *codec.Envelope, rep Replier, principal any, at Stamp) *Request {
	r := sc.begin(parent, env, rep, principal, at)
	r.c.msg = msg
	return r
}

// Prepare takes a request from the engine's pool before its message is
// read, so that the transport peeks straight into its envelope instead of
// filling one of its own that Begin copies (an Envelope is ~400 bytes):
// codec.PeekWith(msg, r.Envelope(), ...), then BeginPrepared if the
// message is a request. A message that is not one (a notification, a
// response, one that fails to parse) leaves r prepared for the next
// message; Discard gives back a prepared request that is not begun. Only
// Envelope may be called on a prepared request.
func (sc *Scope) Prepare() *Request { return callPool.Get().(*Call).req() }

// BeginPrepared is BeginBorrowedAt for r, a request from Prepare whose
// Envelope holds msg's peek. It returns r.
func (sc *Scope) BeginPrepared(r *Request, parent context.Context, msg []byte, rep Replier, principal any, at Stamp) *Request {
	sc.beginCall(r.c, parent, rep, principal, at)
	r.c.msg = msg
	return r
}

// Discard gives back a request from Prepare that was not begun (one from
// Batch.Prepare on the batch's goroutine, before its End).
func (r *Request) Discard() {
	c := r.c
	c.env = codec.Envelope{} // no hold on the transport's buffer
	if b := c.recycleTo; b != nil {
		// The batch's spare (Batch.Prepare): the batch no longer owns it.
		c.recycleTo = nil
		b.forget(c)
	}
	c.unbind() // a spare keeps the bindings of its last request (release)
	callPool.Put(c)
}

// Shutdown stops the scope only: requests it begins from now on are
// answered "Server is shutting down", its listen streams complete with
// their final result at once (SUB-10), and its other requests may finish
// until ctx ends; then they are cancelled. It returns nil once none of the
// scope's requests is in flight, or ctx.Err() at ctx's deadline. The engine
// and other scopes go on.
func (sc *Scope) Shutdown(ctx context.Context) error {
	sc.srv.tracker.closeScope(sc)
	for _, r := range sc.srv.tracker.refs(sc) {
		r.EndStream()
	}
	return sc.srv.tracker.wait(ctx, sc)
}
