package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

type callState uint8

const (
	stateRunning callState = iota
	stateCancelled
	stateFinished
)

// closedChan is a closed channel shared by every Call whose Done is asked for
// after cancellation.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Call is what a handler sees of one request in flight: the request's
// members, its result builder, progress and log notifications, and its
// context.Context. It is valid only until the handler returns (see the
// package documentation). Transports never use a Call: they hold the same
// request as a Request.
type Call struct {
	srv       *Server
	rep       Replier
	parent    context.Context
	principal any
	env       codec.Envelope
	method    *method
	tool      *Tool
	// tc is the check kept for the last template generation seen
	// (keepCheck, tmplHit); release leaves it, so that the next request
	// on this Call finds it.
	tc tmplCheck

	msg     []byte // the transport's message while borrowed (BeginBorrowed), else nil
	buf     []byte // private copy of the request message
	out     []byte // the encoded response
	scratch []byte
	argBuf  []byte // ArgBytes' unescaped values
	cursor  []byte // a list request's cursor: kind, then key (readCursor); empty: first page
	textBuf []byte // a typed tool's result text (ResultText), kept for reuse
	// The flat check's scan of a tools/call's arguments (flatBy's names'
	// raw values), valid while flatBy is set: a typed tool decodes from it
	// instead of scanning the arguments again.
	flatVals [maxFlat][]byte
	flatN    int // flatVals' slots a scan may have filled
	flatBy   *flatSchema
	status   int
	result   bool // a response was set in out
	open     bool // out holds a result that still needs its closing brace
	// stagedCap is cap(out) while out is the spare room of the batch's
	// stage (Batch.SetStage: a request run inline writes its response
	// where the transport keeps the read's answers), else 0; keep is then
	// the Call's own buffer, given back at release. Every writer of out
	// appends to it, reslices it within its capacity, or replaces it with
	// a larger buffer: cap(out) == stagedCap means out is still the
	// stage's room, a larger one a buffer of the Call's own. Out of a
	// request, keep is nil or a buffer of at most maxKeep bytes (out's,
	// or one out has since outgrown), not cleared to spare a store.
	stagedCap int
	keep      []byte
	// esc is len(out) while everything in out was written by the engine's
	// own escaping encoders (Text and its kin, a typed tool's flat result):
	// out then holds no raw newline (Request.ReplyEscaped). Any other write
	// changes len(out) or restarts the response (openResult, setError
	// clear it).
	esc int

	// Extension points (hooks.go); all zero unless used.
	rkind       resultKind      // what out holds, for Outcome
	code        codec.Code      // the JSON-RPC error code of an error answer
	refused     bool            // answered "shutting down" by admit
	hooked      bool            // CallStart ran
	listening   bool            // ListenStart ran
	serverEnded bool            // a listen stream completed by the server (EndStream)
	conn        *ConnInfo       // Request.SetConn
	hdrs        Headers         // Request.SetHeaders
	values      context.Context // SetValues

	// Per-caller limits (limit.go).
	lim      *limitEntry // the caller's entry while this request holds a slot
	limKind  uint8       // which slot: limListen or limInFlight
	limRetry int32       // seconds of a refusal's Retry-After
	limKey   string      // Request.SetLimitKey: an anonymous caller's key

	// mu to dl's flags: the fields complete and release read under mu on
	// every request, on two cache lines (dl's flags first in deadline,
	// logs' in logLimit; prog, whose flags lead it too, is last).
	mu    sync.Mutex
	done  chan struct{}
	err   error
	state callState
	sub   *subscription
	logs  logLimit
	dl    deadline
	// detached: the handler returned and left the call open (listen);
	// detachDone: someone has started completing it.
	detached, detachDone bool

	scope   *Scope
	tprev   *Call // tracker list links, guarded by the shard's lock
	tnext   *Call
	shard   uint8 // tracker shard, fixed for the Call's life
	tracked bool
	ended   bool // complete bumped gen: release need not take mu
	// rare: one of the fields release clears only when this is set may
	// hold something of this request: conn, hdrs, values, limKey,
	// limRetry, tdata, refused, hooked, listening, detached, detachDone,
	// serverEnded. Every writer of one of them sets it too, and so do
	// those of lim and sub (complete tests them only when it is set).
	rare       bool
	tdata      any // the transport's per-request state (Request.SetTransportData)
	stopParent func() bool
	gen        uint64 // bumped once per request, in complete (ended); guarded by mu
	t0         int64  // monotonic start, for the duration histograms (metrics.go)
	batch      *Batch // the read this request came with, while it ends on its goroutine (batch.go)
	markOf     *Batch // set on a Batch's tracker entry only, which serves no request
	// recycleTo is the batch that owns the Call after its request ended
	// there (release keeps it as the batch's spare, Prepare hands it out
	// again) until it leaves the batch; set and read on the batch's
	// goroutine (batch.go).
	recycleTo *Batch
	// admitted is gen+1 of the request a Batch admitted on this Call
	// (Batch.admit), for batchRef: stored before admit reads the shutdown
	// flags.
	admitted atomic.Uint64

	// Callbacks of contexts derived from the Call (afterfunc.go), guarded
	// by mu; afterWG holds the Call back from recycling while they run.
	afters   []afterFunc
	afterSeq uint64
	afterWG  sync.WaitGroup
	// afterUsed: afterWG has been added to at some time in the Call's
	// life (markAfters); never cleared, so that a callback started for an
	// earlier request is still waited for.
	afterUsed atomic.Bool

	self Request // the transports' handle on this request, self.c == the Call

	// A typed tool's decoded strings (typed_flat.go), kept across requests;
	// near the end, so as not to move the fields every request reads.
	strs strChunk

	// prog last: its flags (sent, pending, armed) lead it, and the rest,
	// touched only by a request that sends progress, fills no line that
	// the usual request reads.
	prog progress
}

var callPool = sync.Pool{New: func() any {
	c := &Call{shard: nextShard()}
	c.self.c = c
	return c
}}

// maxKeep bounds the buffers a recycled Call keeps (C16).
const maxKeep = 64 << 10

// own makes the request independent of the transport's buffer: the
// message is copied and the envelope re-pointed at the copy. A no-op once
// owned.
func (c *Call) own() {
	if c.msg == nil {
		return
	}
	c.buf = append(c.buf[:0], c.msg...)
	c.env.Rebase(c.msg, c.buf)
	c.msg = nil
}

func (c *Call) release() {
	if c.stopParent != nil {
		c.stopParent()
		c.stopParent = nil
	}
	if c.sub != nil {
		c.dropSub()
	}
	// complete moved gen on under mu (every request ends through it):
	// whoever takes mu from then on with a reference to this request (a
	// RequestRef, the timeout's and the progress limiter's timers — a
	// progress timer that fired before complete stopped it may still be
	// running progressTimer —, AfterFunc's stop) finds another generation
	// and touches nothing else.
	c.prog.reset()
	c.ended = false
	c.method, c.tool = nil, nil
	c.dl.timedOut = false
	c.done, c.err = nil, nil
	c.result, c.open = false, false
	c.rkind, c.code = kindNone, 0
	if c.rare {
		c.clearRare()
	}
	// c.batch is nil here: complete's endInBatch cleared it, and a request
	// that left its batch cleared it then (leaveBatch).
	if c.logs.started {
		c.logs.reset() // a request that logged under a limit (take counts a drop only once started)
	}
	if c.stagedCap != 0 {
		// out is the stage's room (the transport has taken the response
		// there) or, when the response outgrew it, a larger buffer that
		// becomes the Call's own (dropped below past maxKeep).
		if cap(c.out) == c.stagedCap {
			c.out = c.keep // keep may go on naming it (see keep)
		} else {
			c.keep = nil
		}
		c.stagedCap = 0
	}
	// The caps' OR is at least each of them: one test when none is past
	// maxKeep, the usual case (msg's included: dropLarge's envelope).
	if cap(c.msg)|cap(c.buf)|cap(c.out)|cap(c.scratch)|cap(c.argBuf)|cap(c.textBuf) > maxKeep {
		c.dropLarge()
	}
	c.msg = nil
	c.cursor = c.cursor[:0]
	if c.flatN != 0 || c.flatBy != nil {
		for i := range c.flatN { // no hold on the message's buffer (a loop: clear is a call)
			c.flatVals[i] = nil
		}
		c.flatBy, c.flatN = nil, 0
	}
	if b := c.recycleTo; b != nil {
		// Ended on its batch's goroutine (endInBatch), which prepares the
		// batch's next request: no pool round trip. recycleTo stays set
		// while the batch owns the Call (Discard).
		// Its bindings (srv, scope, rep, parent, principal) stay: the
		// batch's next request sets them all again as it begins (Begin*),
		// and End or Discard clears them before the pool (unbind).
		if b.spare == nil {
			b.spare = c
			return
		}
		c.recycleTo = nil
		b.forget(c)
	}
	c.unbind()
	callPool.Put(c)
}

// dropSub is release's step for a listen stream, out of line (as
// clearRare and dropLarge) so that release's usual steps lie on fewer
// code lines: hub deliveries racing with the stream's end read c.sub
// under c.mu.
//
//go:noinline
func (c *Call) dropSub() {
	c.mu.Lock()
	c.sub = nil
	c.mu.Unlock()
}

// clearRare clears what most requests never set (the hooks', the
// limiter's, the transport's data, a listen stream's): release calls it
// only when rare says one may be set.
//
//go:noinline
func (c *Call) clearRare() {
	c.refused, c.hooked, c.listening, c.serverEnded = false, false, false, false
	c.detached, c.detachDone = false, false
	c.conn, c.hdrs, c.values = nil, nil, nil
	c.limKey, c.limRetry = "", 0
	c.tdata = nil
	c.rare = false
}

// unbind clears what a request's Call holds of its transport and caller
// (Begin* sets it): a pooled Call keeps none of them alive.
func (c *Call) unbind() {
	c.srv, c.rep, c.parent, c.principal, c.scope = nil, nil, nil, nil, nil
}

// dropLarge drops the Call's buffers that grew past maxKeep (release),
// and the envelope when its spans may name one (msg or buf). Not inlined:
// release calls it rarely.
//
//go:noinline
func (c *Call) dropLarge() {
	if cap(c.msg) > maxKeep || cap(c.buf) > maxKeep {
		// The envelope's spans hold a large buffer (the transport's, or
		// c.buf, dropped below): let it go. Otherwise they point into
		// c.buf or a borrowed buffer of at most maxKeep, and the next
		// Begin or Peek overwrites them: clearing the ~400 bytes for
		// every request is not needed.
		c.env = codec.Envelope{}
	}
	if cap(c.buf) > maxKeep {
		c.buf = nil
	}
	if cap(c.out) > maxKeep {
		c.out = nil
	}
	if cap(c.scratch) > maxKeep {
		c.scratch = nil
	}
	if cap(c.argBuf) > maxKeep {
		c.argBuf = nil
	}
	if cap(c.textBuf) > maxKeep {
		c.textBuf = nil
	}
}

// context.Context -------------------------------------------------------

// Deadline reports the parent context's deadline.
func (c *Call) Deadline() (time.Time, bool) { return c.parent.Deadline() }

// Done is closed when the request is cancelled (notifications/cancelled,
// disconnect, shutdown) or has completed.
func (c *Call) Done() <-chan struct{} {
	c.mu.Lock()
	if c.done == nil {
		if c.state != stateRunning {
			c.done = closedChan
		} else {
			c.done = make(chan struct{})
		}
	}
	d := c.done
	c.mu.Unlock()
	return d
}

// Err is nil while the request runs; context.DeadlineExceeded after its
// timeout, context.Canceled after it was cancelled or completed.
func (c *Call) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateRunning {
		return c.parent.Err()
	}
	if c.dl.timedOut {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// Value looks key up in the values a hook attached (SetValues), else in
// the parent context.
func (c *Call) Value(key any) any {
	if c.values != nil {
		return c.values.Value(key)
	}
	return c.parent.Value(key)
}

// Cause returns why the call was cancelled (nil while it runs).
func (c *Call) Cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// cancelGen cancels the call only if it is still the same request.
func (c *Call) cancelGen(gen uint64, why error) bool {
	c.mu.Lock()
	if c.gen != gen {
		c.mu.Unlock()
		return false
	}
	return c.cancelLocked(why)
}

// cancelLocked is cancel with c.mu held; it releases it.
func (c *Call) cancelLocked(why error) bool {
	if c.state != stateRunning {
		c.mu.Unlock()
		return false
	}
	c.state = stateCancelled
	c.err = why
	c.closeDoneLocked()
	c.prog.stopLocked()
	c.stopTimeoutLocked()
	afters := c.takeAftersLocked() // (after the timers' calls: not kept across them)
	sub, detached := c.sub, c.detached
	c.mu.Unlock()
	c.runAfters(afters)
	if sub != nil {
		c.srv.hub.remove(sub)
	}
	if detached {
		c.finishDetached(false, nil) // this generation: it cannot end before this
	}
	return true
}

// closeDoneLocked closes the channel Done gave out, if it gave one. When
// it gave none, done stays nil (no store for most requests): every caller
// has moved the state on from stateRunning, so a later Done answers
// closedChan.
func (c *Call) closeDoneLocked() {
	if d := c.done; d != nil && d != closedChan {
		close(d)
		c.done = closedChan
	}
}

// request accessors --------------------------------------------------------

// The raw slices below alias the request as read. Each is cut at its own
// end (no room past it), so a handler's append copies instead of writing
// over the bytes that follow: the rest of the message and, on the line
// transports, the next requests of the same read (round 9's review).

// span returns b without room past its end.
func span(b []byte) []byte { return b[:len(b):len(b)] }

// Server returns the server serving the call.
func (c *Call) Server() *Server { return c.srv }

// ID returns the raw JSON id of the request.
func (c *Call) ID() []byte { return span(c.env.ID) }

// Method returns the method name.
func (c *Call) Method() string {
	if c.method != nil {
		return c.method.name
	}
	return c.env.Method.String()
}

// Principal returns what the transport's authentication established (nil
// when unauthenticated).
func (c *Call) Principal() any { return c.principal }

// Params returns the raw params object.
func (c *Call) Params() []byte { return span(c.env.Params) }

// Arguments returns the raw params.arguments (tools/call, prompts/get) or nil.
func (c *Call) Arguments() []byte { return span(c.env.Arguments) }

// Meta returns the raw params._meta object.
func (c *Call) Meta() []byte { return span(c.env.Meta) }

// Name returns params.name (tools/call, prompts/get).
func (c *Call) Name() string { return c.env.Name.String() }

// URI returns params.uri (resources/read).
func (c *Call) URI() string { return c.env.URI.String() }

// ProtocolVersion returns the request's _meta protocol version.
func (c *Call) ProtocolVersion() string { return c.env.ProtocolVersion.String() }

// HasClientCapability reports whether this request's clientCapabilities
// declares the top-level capability name (META-08: only this request counts).
func (c *Call) HasClientCapability(name string) bool {
	raw, ok := codec.LookupPath(c.env.ClientCapabilities, name)
	// A capability is declared by an object value; null, false or 0 do not
	// declare it.
	return ok && len(raw) > 0 && raw[0] == '{'
}

// ClientInfo returns the raw io.modelcontextprotocol/clientInfo object of
// the request's _meta, or nil. It is what the client says of itself, for
// logs and metrics only: never trust it for a decision (META-05).
func (c *Call) ClientInfo() []byte { return span(c.env.ClientInfo) }

// ProgressToken returns the raw progressToken of the request (nil when the
// client did not opt into progress).
func (c *Call) ProgressToken() []byte { return span(c.env.ProgressToken) }

// Bind decodes the arguments (params.arguments) into v, a pointer. Missing
// arguments decode as an empty object. Member names match json tags (or
// field names) exactly, case included, unlike encoding/json: {"Text":"x"}
// leaves a field tagged `json:"text"` empty. A value of the wrong type is
// an *ArgumentsError naming the argument and the JSON type expected
// ("Invalid arguments: arguments.n: expected integer, got string"), never
// a copy of the input: returned by a tools/call handler, it is the tool's
// error result the model reads (SEP-1303); by another handler, -32602.
func (c *Call) Bind(v any) error {
	args := c.env.Arguments
	if args == nil {
		args = []byte("{}")
	}
	if err := codec.Unmarshal(args, v); err != nil {
		return bindError(args, v)
	}
	return nil
}

// ArgBytes returns the unescaped string argument key. The slice aliases the
// request or a buffer of the Call reserved for ArgBytes: it stays valid
// until the next ArgBytes call or the handler's return, and may be passed
// to TextBytes or Return.
func (c *Call) ArgBytes(key string) ([]byte, bool) {
	s, ok := c.env.ArgString(key)
	if !ok {
		return nil, false
	}
	if !s.Escaped {
		return span(s.Raw), true
	}
	c.argBuf = s.AppendUnescaped(c.argBuf[:0])
	return c.argBuf, true
}

// ArgString returns the string argument key.
func (c *Call) ArgString(key string) (string, bool) {
	s, ok := c.env.ArgString(key)
	if !ok {
		return "", false
	}
	return s.String(), true
}

// ParamRaw returns the raw value of the params member key (for example
// "requestState" or "inputResponses", MRTR-06).
func (c *Call) ParamRaw(key string) ([]byte, bool) {
	v, ok := codec.LookupPath(c.env.Params, key)
	return span(v), ok
}

// results -----------------------------------------------------------------

// startResult writes the response head into out.
func (c *Call) startResult() { c.openResult(`,"result":`) }

// openResult starts the response with its id and then head, which begins
// with `,"result":` (and may go on into the result, to save an append).
func (c *Call) openResult(head string) {
	c.out = append(c.out[:0], `{"jsonrpc":"2.0","id":`...)
	c.out = append(c.out, c.env.ID...)
	c.out = append(c.out, head...)
	c.result, c.open = true, true
	c.esc = 0
}

// Text sets a text tool result (no reflection, no allocation).
func (c *Call) Text(s string) { c.textResult([]byte(s), kindComplete) }

// TextBytes is Text for a byte slice.
func (c *Call) TextBytes(b []byte) { c.textResult(b, kindComplete) }

// ErrorText sets a tool result with isError true.
func (c *Call) ErrorText(s string) { c.textResult([]byte(s), kindToolError) }

// textHead follows the id of a text result: the result up to its text.
const textHead = `,"result":{"resultType":"complete","content":[{"type":"text","text":`

// openText returns c.out restarted with the response up to the string of
// a text content: its id, then textHead. The caller appends to the slice
// and stores it in c.out once, with c.result, c.open, c.rkind and c.esc.
func (c *Call) openText() []byte {
	// One capacity check, and the two constant parts copied as arrays
	// (moves the compiler writes out, where an append of a string is a
	// memmove call); the usual short id as two words.
	id := c.env.ID
	n := len(responseHead) + len(id) + len(textHead)
	out := c.out
	if cap(out) < n {
		out = make([]byte, 0, max(n+n, 512))
	}
	out = out[:n]
	*(*[len(responseHead)]byte)(out) = responseHeadBytes
	if len(id) <= 16 {
		// Its two ends as words (wordEnds): textHead, written next,
		// covers what the second writes past the id.
		b := unsafe.Pointer(unsafe.SliceData(out))
		lo, hi, k := wordEnds(id)
		putWord(b, len(responseHead), lo)
		putWord(b, len(responseHead)+len(id)-k, hi)
	} else {
		copy(out[len(responseHead):], id)
	}
	*(*[len(textHead)]byte)(out[n-len(textHead):]) = textHeadBytes
	return out
}

// responseHead begins every response, up to its id.
const responseHead = `{"jsonrpc":"2.0","id":`

// responseHeadBytes and textHeadBytes are responseHead and textHead as
// arrays, for openText's fixed-size copies.
var (
	responseHeadBytes = [len(responseHead)]byte([]byte(responseHead))
	textHeadBytes     = [len(textHead)]byte([]byte(textHead))
)

// textResult writes the response of a text tool result: the head, text
// escaped, and the rest of the result (Server.textTail, or with isError
// true for kindToolError), appended to a local slice stored once (each
// append to c.out is a store to the Call, with its write barrier check).
func (c *Call) textResult(text []byte, kind resultKind) {
	out := codec.AppendStringBytes(c.openText(), text)
	if kind == kindToolError {
		out = append(out, `}],"isError":true,"_meta":`...)
		out = append(out, c.srv.serverMeta...)
		out = append(out, '}', '}')
	} else {
		out = append(out, c.srv.textEnd...)
	}
	// Closed here (the last brace), not by complete.
	c.out = out
	c.result, c.open = true, false
	c.rkind = kind
	c.esc = len(out) // the id (peeked: no raw control byte), the text escaped
}

// Return sets the result to v (a ToolResult, PromptResult,
// ReadResourceResult, CompleteResult, or any value that encodes as a JSON
// object). The engine adds resultType "complete", the cache hints for
// resources/read, and _meta with serverInfo; v must not carry those members.
func (c *Call) Return(v any) error {
	enc, err := codec.AppendMarshal(c.scratch[:0], v)
	if err != nil {
		return err
	}
	c.scratch = enc
	if len(enc) < 2 || enc[0] != '{' {
		return errors.New("engine: result is not a JSON object")
	}
	c.startResult()
	c.rkind = kindComplete
	c.out = append(c.out, `{"resultType":"complete"`...)
	if inner := enc[1 : len(enc)-1]; len(trimSpace(inner)) > 0 {
		c.out = append(c.out, ',')
		c.out = append(c.out, inner...)
	}
	if c.method != nil && c.method.cacheable && !c.isRetry() {
		c.out = append(c.out, c.srv.regs().hints...)
	}
	c.out = append(c.out, `,"_meta":`...)
	c.out = append(c.out, c.srv.serverMeta...)
	c.out = append(c.out, '}')
	return nil
}

// isRetry reports whether the request is an MRTR retry, whose result must
// not carry cache hints (MRTR-10).
func (c *Call) isRetry() bool {
	if _, ok := codec.LookupPath(c.env.Params, "requestState"); ok {
		return true
	}
	_, ok := codec.LookupPath(c.env.Params, "inputResponses")
	return ok
}

// InputRequired answers with an InputRequiredResult (MRTR-01). Only
// tools/call, prompts/get and resources/read may (MRTR-02); elsewhere it
// returns an error.
func (c *Call) InputRequired(ir mcp.InputRequired) error {
	if c.method == nil || !c.method.mrtr {
		return errors.New("engine: input_required is not allowed for " + c.Method())
	}
	if len(ir.InputRequests) == 0 && ir.RequestState == "" {
		return errors.New("engine: input_required needs inputRequests or requestState")
	}
	enc, err := codec.AppendMarshal(c.scratch[:0], ir)
	if err != nil {
		return err
	}
	c.scratch = enc
	c.startResult()
	c.rkind = kindInputRequired
	c.out = append(c.out, `{"resultType":"input_required",`...)
	c.out = append(c.out, enc[1:len(enc)-1]...)
	c.out = append(c.out, `,"_meta":`...)
	c.out = append(c.out, c.srv.serverMeta...)
	c.out = append(c.out, '}')
	return nil
}

// setRawResult sets an already encoded result object, which must carry
// resultType (and should carry _meta serverInfo, see ServerMeta).
func (c *Call) setRawResult(obj []byte) {
	c.startResult()
	c.rkind = kindComplete
	c.out = append(c.out, obj...)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// completion ----------------------------------------------------------------

// fail answers the call with e (status from e) and ends it.
func (c *Call) fail(e *codec.Error) {
	if h := c.srv.hooks; h != nil {
		c.hookStart(h)
	}
	c.setError(e)
	c.complete()
}

func (c *Call) setError(e *codec.Error) {
	var id []byte
	if c.env.IDKind == codec.IDString || c.env.IDKind == codec.IDNumber {
		id = c.env.ID
	}
	c.out = codec.AppendErrorResponse(c.out[:0], id, e)
	c.esc = 0
	c.status = e.HTTPStatus()
	c.result, c.open = true, false
	c.rkind, c.code = kindError, e.Code
}

// complete sends the response unless the call was cancelled, then ends it.
func (c *Call) complete() {
	if !c.result {
		c.noResult()
	}
	if c.open {
		if c.esc == len(c.out) {
			c.esc++ // the closing brace is the engine's too
		}
		c.out = append(c.out, '}')
		c.open = false
	}
	c.mu.Lock()
	// A request admit refused is answered even when a shutdown's cancel
	// pass named it: Batch.admit stores the mark before it reads the
	// shutdown flags, and a pass between the two cancels a request whose
	// handler never runs. Its refusal is its answer
	// (TestBatchRefusedKeepsAnswer).
	send := c.state == stateRunning || c.refused && c.state == stateCancelled
	if send {
		c.prog.flushLocked(c)
		c.logs.flushLocked(c)
		c.state = stateFinished
	}
	c.closeDoneLocked()
	c.prog.stopLocked()
	c.stopTimeoutLocked()
	afters := c.takeAftersLocked() // (after the timers' calls: not kept across them)
	// The request's generation ends here, with its state, under the one
	// lock pair complete takes anyway, so that release need not take mu
	// again. References taken from now on name the next generation, so
	// tracker.refs skips a Call that is no longer running (one on its own
	// is listed until the end of complete removes it), and batchRef one whose admission
	// mark names an older generation (the batch's next request on the
	// Call is marked only when admitted: TestCancelPassSparesNextRequest).
	c.gen++
	c.ended = true
	c.mu.Unlock()
	c.runAfters(afters)
	if send {
		var err error
		if b := c.batch; b != nil && b.rep != nil {
			// On the batch's goroutine (a request that ends elsewhere has
			// left the batch): the transport keeps it with the read's.
			err = b.rep.ReplyInBatch(c.req(), c.out)
		} else {
			err = c.rep.Reply(c.req(), c.out, c.status)
		}
		if err != nil {
			c.replyLost(err)
		}
	}
	// The request's end, written out (complete is end's only caller): its
	// duration, derived contexts' callbacks, hooks, the tracker, the
	// limiter, a listen stream's subscription, the transport's Done, then
	// the Call's release.
	b := c.batch
	if b == nil {
		c.observeEnd()
	}
	if c.afterUsed.Load() {
		c.afterWG.Wait() // callbacks of derived contexts still running (afterfunc.go)
	}
	// hooked, lim and sub are set only with rare (acquire sets it before
	// lim; hookStart and listen with theirs): one test for all three on
	// the usual request.
	rare := c.rare
	if rare && c.hooked {
		if h := c.srv.hooks; h != nil {
			c.hookEnd(h)
		}
	}
	c.srv.tracker.remove(c)
	if rare {
		c.endRare()
	}
	rep := c.rep
	if b != nil {
		if !b.doneData || c.tdata != nil {
			rep.Done(c.req())
		}
		c.endInBatch(b) // before release: a recycled Call is no batch's running request
	} else {
		rep.Done(c.req())
	}
	c.release()
}

// complete's rare steps, out of line so that its usual ones lie on fewer
// code lines.

// noResult answers a request whose handler set nothing: an empty tool
// result would be a lie, so this is an internal error.
//
//go:noinline
func (c *Call) noResult() { c.setError(errNoResult) }

//go:noinline
func (c *Call) replyLost(err error) { c.srv.log.l.Debug("reply not delivered", "err", err) }

// endRare gives back a request's per-caller slot and a listen stream's
// subscription (lim and sub are set only with rare).
//
//go:noinline
func (c *Call) endRare() {
	if c.lim != nil {
		c.srv.lim.release(c)
	}
	if c.sub != nil {
		c.srv.hub.remove(c.sub)
	}
}

var errNoResult = codec.NewError(codec.CodeInternalError, "Internal error: the handler produced no result")

// req is the binding-facing view of c.
func (c *Call) req() *Request { return &c.self }
