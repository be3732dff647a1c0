package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// The bridge runs a 2025-era request through the engine as a 2026-07-28
// request (the session's capabilities, client info and log level become
// the request's _meta) and turns what comes back into the 2025 shape.

// wire is one JSON-RPC message as a 2025 client sends it.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var (
	errBatch    = codec.NewError(codec.CodeInvalidRequest, "Invalid Request: batch arrays are not supported")
	errNotRPC   = codec.NewError(codec.CodeInvalidRequest, `Invalid Request: expected one JSON-RPC 2.0 message`)
	errBadParam = codec.NewError(codec.CodeInvalidParams, "Invalid params: params must be an object")
)

// parse decodes one message; a batch or a non-object is an error.
func parse(body []byte) (*wire, *codec.Error) {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		return nil, errBatch
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, codec.ErrParse
	}
	var m wire
	if err := codec.Unmarshal(b, &m); err != nil {
		return nil, codec.ErrParse
	}
	if m.JSONRPC != "2.0" {
		return nil, errNotRPC
	}
	if len(m.ID) > 0 && !validID(m.ID) {
		return nil, codec.ErrBadID
	}
	if len(m.Params) > 0 && m.Params[0] != '{' && !bytes.Equal(m.Params, []byte("null")) {
		return nil, codec.ErrBadParams
	}
	return &m, nil
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// modern builds the engine's message for a request of ss: params with the
// session's _meta merged under the client's own _meta members (progressToken
// stays), plus extra params (an MRTR retry's inputResponses and
// requestState). The common case is appended to dst. head is the
// session's metaHead when the caller has it, else nil.
//
// src, when not nil, is the envelope PeekWith gave the body params came
// from (the fast path's): its _meta span is taken from there rather than
// looked up again. When sp is not nil and the common case applies, sp
// records where the message's parts went (for deriveEnvelope); sp.ok
// false otherwise.
func (ss *session) modern(dst []byte, head *metaBlock, id json.RawMessage, method string, params json.RawMessage, extra map[string]json.RawMessage, src *codec.Envelope, sp *splice) ([]byte, error) {
	if extra == nil {
		if out, ok := ss.modernFast(dst, head, id, method, params, src, sp); ok {
			return out, nil
		}
	}
	if sp != nil {
		sp.ok = false
	}
	return ss.modernMap(id, method, params, extra)
}

// modernMap is modern through a decoded params map: the client's _meta
// members and the session's merged (the session's win).
func (ss *session) modernMap(id json.RawMessage, method string, params json.RawMessage, extra map[string]json.RawMessage) ([]byte, error) {
	p := map[string]json.RawMessage{}
	if len(params) > 0 && params[0] == '{' {
		if err := codec.Unmarshal(params, &p); err != nil {
			return nil, errBadParam
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := p["_meta"]; ok && len(raw) > 0 && raw[0] == '{' {
		if err := codec.Unmarshal(raw, &meta); err != nil {
			return nil, errBadParam
		}
	}
	ss.meta(meta)
	mb, err := codec.Marshal(meta)
	if err != nil {
		return nil, err
	}
	p["_meta"] = mb
	for k, v := range extra {
		p[k] = v
	}
	pb, err := codec.Marshal(p)
	if err != nil {
		return nil, err
	}
	out := []byte(`{"jsonrpc":"2.0","id":`)
	out = append(out, id...)
	out = append(out, `,"method":`...)
	out = codec.AppendString(out, method)
	out = append(out, `,"params":`...)
	out = append(out, pb...)
	return append(out, '}'), nil
}

// metaKeys are the _meta members the session supplies.
var metaKeys = []string{codec.MetaProtocolVersion, codec.MetaClientCapabilities, codec.MetaClientInfo, codec.MetaLogLevel}

// metaKeyPrefix begins each of metaKeys (TestMetaKeyPrefix).
const metaKeyPrefix = "io.modelcontextprotocol/"

// modernFast is modern without decoding params: the session's _meta
// members are spliced in front of the client's own (or a _meta is added).
// It declines (ok false) when the client's _meta names one of the
// session's keys itself, or params is not an object; modern then merges
// through a map.
func (ss *session) modernFast(dst []byte, head *metaBlock, id json.RawMessage, method string, params json.RawMessage, src *codec.Envelope, sp *splice) ([]byte, bool) {
	if head == nil {
		head = ss.metaHead()
	}
	hb := head.b
	var lay splice // where the parts go, for sp
	out := dst[:0]
	if cap(out) < len(params)+len(hb)+len(method)+len(id)+64 {
		out = make([]byte, 0, len(params)+len(hb)+len(method)+len(id)+64)
	}
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	lay.idOff = len(out)
	out = append(out, id...)
	out = append(out, `,"method":`...)
	lay.methodOff = len(out) + 1
	out = codec.AppendString(out, method)
	out = append(out, `,"params":`...)
	lay.pOff = len(out)
	p := trimSpace(params)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		out = append(out, `{"_meta":{`...)
		lay.headOff = len(out)
		out = append(out, hb...)
		out = append(out, `}}}`...)
		lay.metaOff, lay.metaN = lay.headOff-1, len(hb)+2
		return out, sp.set(&lay, head, nil)
	}
	if p[0] != '{' {
		return nil, false
	}
	var meta []byte
	found, peeked := false, false
	if src != nil && src.Meta != nil {
		// PeekWith found params._meta, an object, once (a repeat is
		// ErrDuplicateKey there).
		meta, found, peeked = src.Meta, true, true
	} else {
		var err error
		if meta, found, err = codec.LookupPathStrict(p, "_meta"); err != nil {
			return nil, false
		}
	}
	if !found {
		out = append(out, `{"_meta":{`...)
		lay.headOff = len(out)
		out = append(out, hb...)
		out = append(out, '}')
		lay.metaOff, lay.metaN = lay.headOff-1, len(hb)+2
		if rest := trimSpace(p[1:]); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		lay.at, lay.n = 1, len(out)-(lay.pOff+1)
		out = append(out, p[1:]...)
		return append(out, '}'), sp.set(&lay, head, p)
	}
	if len(meta) == 0 || meta[0] != '{' {
		return nil, false
	}
	// One pass over the client's _meta for metaKeys, unless it cannot
	// name one: PeekWith read it whole (so the pass would find no syntax
	// error), and without a backslash a key is its bytes, which for one of
	// metaKeys hold their common prefix.
	if !peeked || bytes.IndexByte(meta, '\\') >= 0 || bytes.Contains(meta, []byte(metaKeyPrefix)) {
		var vals [4][]byte
		if codec.LookupMembers(meta, metaKeys, vals[:]) != nil || vals[0] != nil || vals[1] != nil || vals[2] != nil || vals[3] != nil {
			return nil, false
		}
	}
	// meta aliases p: copy p up to the inside of _meta's object, our
	// members, then the rest.
	start := cap(p) - cap(meta) // offset of meta in p
	if start <= 0 || start+len(meta) > len(p) || !bytes.Equal(p[start:start+len(meta)], meta) {
		return nil, false
	}
	out = append(out, p[:start+1]...)
	lay.headOff = len(out)
	out = append(out, hb...)
	if inner := trimSpace(meta[1:]); len(inner) > 0 && inner[0] != '}' {
		out = append(out, ',')
	}
	lay.metaOff = -1 // the client's, moved
	lay.at, lay.n = start+1, len(out)-(lay.pOff+start+1)
	out = append(out, p[start+1:]...)
	return append(out, '}'), sp.set(&lay, head, p)
}

// metaHead returns the session's _meta members, encoded (without braces),
// rebuilt when the record's version moves.
func (ss *session) metaHead() *metaBlock {
	ss.mu.Lock()
	if ss.head != nil && ss.headVer == ss.ver {
		h := ss.head
		ss.mu.Unlock()
		return h
	}
	ver := ss.ver
	ss.mu.Unlock()
	m := map[string]json.RawMessage{}
	ss.meta(m)
	var h []byte
	for _, k := range metaKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		if len(h) > 0 {
			h = append(h, ',')
		}
		h = codec.AppendString(h, k)
		h = append(h, ':')
		h = append(h, v...)
	}
	mb := newMetaBlock(h, ss.s.maxDepth)
	ss.mu.Lock()
	if ss.ver == ver {
		ss.head, ss.headVer = mb, ver
	}
	ss.mu.Unlock()
	return mb
}

// outcome is what one engine request produced.
type outcome struct {
	frame  []byte // the response, as the engine encoded it
	status int
	// complete's answer for frame, once asked (the fast path asks before
	// rounds does); reset with frame.
	res         []byte
	seen, resOK bool
}

// complete is completeResult(o.frame, id), worked out once per frame (the
// id is the request's, the same for every ask of one outcome). It writes
// the memo without a lock: safe because the engine replies once per call,
// so the outcome is not written again while it is read.
func (o *outcome) complete(id []byte) ([]byte, bool) {
	if !o.seen {
		o.res, o.resOK = completeResult(o.frame, id)
		o.seen = true
	}
	return o.res, o.resOK
}

// call is one engine request in flight for a session: the engine's
// Replier. Notifications and the reply queue up; the HTTP side drains them.
type call struct {
	mu    sync.Mutex
	notes [][]byte
	reply *outcome
	out   outcome // reply's storage: its frame buffer is kept with a pooled call
	done  bool
	wake  chan struct{}
	// looked: take or peek has read the call since it was acquired. Every
	// wait on wake comes after one of them, which sees what was queued
	// before it; so until then Notify, Reply and Done need not signal (a
	// call run inline is answered before anyone looks: no channel send,
	// and none for release to drain).
	looked bool
	ref    engine.RequestRef // the engine request, once begun
	// cancelled is a cancellation that came before the request began (the
	// session ended between addCall and start): it is then not run.
	cancelled error
}

func newCall() *call { return &call{wake: make(chan struct{}, 1)} }

// callPool keeps the calls of ended requests. A call goes back only once
// the engine is done with it (pump saw Done) and it has left its
// session's calls; whoever else needs it later holds its RequestRef
// (claim), which stays safe once the call is reused.
var callPool sync.Pool

func acquireCall() *call {
	if c, _ := callPool.Get().(*call); c != nil {
		return c
	}
	return newCall()
}

// release puts an ended call back (only from the goroutine that ran it,
// after pump returned and removeCall).
func (c *call) release() {
	c.mu.Lock()
	clear(c.notes)
	c.notes = c.notes[:0]
	c.reply, c.done, c.ref, c.cancelled, c.looked = nil, false, engine.RequestRef{}, nil, false
	if cap(c.out.frame) > 64<<10 {
		c.out.frame = nil
	}
	c.out = outcome{frame: c.out.frame[:0]}
	c.mu.Unlock()
	if len(c.wake) > 0 { // a signal nobody took (a late one, or a look that did not wait)
		select {
		case <-c.wake:
		default:
		}
	}
	callPool.Put(c)
}

// claim returns the reference that cancels c's engine request; a call not
// begun yet is marked so that it never runs. For a caller that found c
// under its session's lock (c cannot be released meanwhile): the
// reference is then cancelled outside the lock.
func (c *call) claim(why error) engine.RequestRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ref.Valid() && c.cancelled == nil {
		c.cancelled = why
	}
	return c.ref
}

func (c *call) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Notify implements engine.Replier.
func (c *call) Notify(_ *engine.Request, frame []byte) error {
	c.mu.Lock()
	c.notes = append(c.notes, bytes.Clone(frame))
	looked := c.looked
	c.mu.Unlock()
	if looked {
		c.signal()
	}
	return nil
}

// Reply implements engine.Replier.
func (c *call) Reply(_ *engine.Request, frame []byte, status int) error {
	c.mu.Lock()
	c.out = outcome{frame: append(c.out.frame[:0], frame...), status: status}
	c.reply = &c.out
	looked := c.looked
	c.mu.Unlock()
	if looked {
		c.signal()
	}
	return nil
}

// Done implements engine.Replier.
func (c *call) Done(*engine.Request) {
	c.mu.Lock()
	c.done = true
	looked := c.looked
	c.mu.Unlock()
	if looked {
		c.signal()
	}
}

// take returns what is queued and whether the request has ended.
func (c *call) take() (notes [][]byte, reply *outcome, done bool) {
	c.mu.Lock()
	c.looked = true
	notes, c.notes = c.notes, nil
	reply, c.reply = c.reply, nil
	done = c.done
	c.mu.Unlock()
	return notes, reply, done
}

// start begins msg in the engine with c as its Replier; a validation
// failure is answered through c like any other reply. msg's envelope is
// derived from src, the body's (with sp, how msg was built from it;
// deriveEnvelope), when src is not nil and it can be; else msg is peeked.
// Either way it is written straight into the engine's request.
func (s *Server) start(ctx context.Context, msg []byte, c *call, principal any, limitKey string, src *codec.Envelope, sp *splice) *codec.Error {
	pre := s.scope.Prepare()
	if src == nil || !deriveEnvelope(pre.Envelope(), src, msg, sp) {
		if err := codec.PeekWith(msg, pre.Envelope(), codec.PeekConfig{MaxDepth: s.maxDepth}); err != nil {
			pre.Discard()
			var ce *codec.Error
			if !errors.As(err, &ce) {
				ce = codec.ErrParse
			}
			return ce
		}
	}
	// msg stays valid until this returns: the engine copies it itself
	// when it hands the request to a worker (Start).
	r := s.scope.BeginPrepared(pre, ctx, msg, c, principal, 0)
	r.SetLimitKey(limitKey)
	c.mu.Lock()
	c.ref = r.Ref()
	cancelled := c.cancelled
	c.mu.Unlock()
	if cancelled != nil {
		r.Fail(codec.NewError(codec.CodeInternalError, "Request cancelled"))
		return nil
	}
	if e := r.Check(); e != nil {
		r.Fail(e)
		return nil
	}
	if !r.HasTimeout() && (!r.MayNotify() || r.Inline()) {
		// Nothing can come before the answer, or the handler is Inline
		// (microseconds by contract, so what it notifies goes out with its
		// answer): run it here, as the modern transports do, instead of
		// handing it to a worker and waiting.
		r.Run()
		return nil
	}
	r.Start()
	return nil
}

// cancelNow cancels the call's engine request, or, before it began, keeps
// it from running. Safe from any goroutine.
func (c *call) cancelNow(why error) {
	c.mu.Lock()
	ref := c.ref
	if !ref.Valid() && c.cancelled == nil {
		c.cancelled = why
	}
	c.mu.Unlock()
	ref.Cancel(why)
}

// result translation -------------------------------------------------------------

// response is a JSON-RPC response as the engine wrote it.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Members of a 2026-07-28 result a 2025 client has no use for.
var modernOnly = []string{"resultType", "ttlMs", "cacheScope"}

const keyServerInfo = "io.modelcontextprotocol/serverInfo"

// legacyResult rewrites a complete result for a 2025 client: without
// resultType, the cache hints and serverInfo in _meta. metaTail is
// `,"_meta":` and the engine's server _meta (Server.metaTail).
func legacyResult(raw json.RawMessage, metaTail []byte) (json.RawMessage, error) {
	if out, ok := appendLegacyResult(nil, raw, metaTail); ok {
		return out, nil
	}
	return legacyResultDecoded(raw)
}

// legacyResultDecoded is legacyResult's general way: the result decoded,
// the members dropped, encoded again.
func legacyResultDecoded(raw json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := codec.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	for _, k := range modernOnly {
		delete(obj, k)
	}
	if m, ok := obj["_meta"]; ok {
		var meta map[string]json.RawMessage
		if codec.Unmarshal(m, &meta) == nil {
			delete(meta, keyServerInfo)
			if len(meta) == 0 {
				delete(obj, "_meta")
			} else if b, err := codec.Marshal(meta); err == nil {
				obj["_meta"] = b
			}
		}
	}
	return codec.Marshal(obj)
}

// appendLegacyResult appends to dst the rewrite of the shape the engine
// writes for handler results: {"resultType":"complete",MEMBERS,"_meta":
// SERVERMETA}. Anything else (cache hints, other _meta members, a
// handler's own resultType or cacheScope) it declines (ok false), for
// legacyResult's map way.
func appendLegacyResult(dst, raw, metaTail []byte) ([]byte, bool) {
	const head = `{"resultType":"complete",`
	if !bytes.HasPrefix(raw, []byte(head)) || raw[len(raw)-1] != '}' { // raw holds head: not empty
		return nil, false
	}
	body := raw[len(head) : len(raw)-1]
	if !bytes.HasSuffix(body, metaTail) {
		return nil, false
	}
	body = body[:len(body)-len(metaTail)]
	if !plainText(body) && mayDropMembers(body) {
		return nil, false // possibly top-level members to drop: decode
	}
	dst = append(dst, '{')
	dst = append(dst, body...)
	return append(dst, '}'), true
}

// plainText reports whether body is the engine's text result (Call.Text,
// Call.ToolError: content, then isError false or true) with a text that
// holds no quote and no backslash: then its members are content and
// isError, and the only text between two quotes that is not one of the
// fixed names is the text itself, so mayDropMembers would be false unless
// the text is one of the names it looks for. Two byte scans of the text
// instead of mayDropMembers' five of the whole body.
func plainText(body []byte) bool {
	const pre, post = `"content":[{"type":"text","text":"`, `"}],"isError":`
	if len(body) < len(pre)+len(post)+len("true") || string(body[:len(pre)]) != pre {
		return false
	}
	var n int // where the text ends
	switch {
	case bytes.HasSuffix(body, []byte(post+"false")):
		n = len(body) - len(post) - len("false")
	case bytes.HasSuffix(body, []byte(post+"true")):
		n = len(body) - len(post) - len("true")
	default:
		return false
	}
	if n < len(pre) {
		return false
	}
	text := body[len(pre):n]
	if bytes.IndexByte(text, '"') >= 0 || bytes.IndexByte(text, '\\') >= 0 {
		return false
	}
	switch string(text) {
	case "ttlMs", "_meta", "resultType", "cacheScope":
		return false
	}
	return true
}

// mayDropMembers reports whether body may hold a member the rewrite
// drops (modernOnly's, or _meta): whether it holds one of their names in
// quotes (the colon may follow after whitespace, so it is not looked for)
// or a \u escape (a name may be spelled with one). It answers as
// bytes.Contains would for each, more cheaply: bytes.Index looks for a
// pattern from its first byte, a quote, which a JSON result is full of
// (each one a compare, ~150 ns for the echo result); here each pattern is
// found from a byte that is rare in JSON ('M', '_', 'T', 'S', the backslash) and
// compared around it.
func mayDropMembers(body []byte) bool {
	return holdsAround(body, `"ttlMs"`, 4) || holdsAround(body, `"_meta"`, 1) ||
		holdsAround(body, `"resultType"`, 7) || holdsAround(body, `"cacheScope"`, 6) ||
		holdsAround(body, `\u`, 0)
}

// holdsAround reports whether b holds pat, looked for from each byte of b
// equal to pat[at].
func holdsAround(b []byte, pat string, at int) bool {
	c := pat[at]
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return false
		}
		j += i
		if j >= at && j-at+len(pat) <= len(b) && string(b[j-at:j-at+len(pat)]) == pat {
			return true
		}
		i = j + 1
	}
	return false
}

// legacyError maps the few 2026 error shapes that mean something else to
// a 2025 client: "resource not found" is -32002 there (COMPAT-08).
func legacyError(raw json.RawMessage) json.RawMessage {
	var e struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}
	if codec.Unmarshal(raw, &e) != nil {
		return raw
	}
	if e.Code == int(codec.CodeInvalidParams) && e.Message == "Resource not found" {
		e.Code = -32002
		if b, err := codec.Marshal(e); err == nil {
			return b
		}
	}
	return raw
}

// encodeResponse writes a response frame for id.
func encodeResponse(id, result json.RawMessage) []byte {
	return codec.AppendResponse(nil, id, result)
}

func encodeError(id json.RawMessage, e *codec.Error) []byte {
	return codec.AppendErrorResponse(nil, id, e)
}

func encodeRawError(id, errObj json.RawMessage) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, errObj...)
	return append(b, '}')
}

// inputRequired is the body of an input_required result.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
}

// capabilityFor names the client capability a server→client request needs.
func capabilityFor(method string) string {
	switch method {
	case "sampling/createMessage":
		return "sampling"
	case "elicitation/create":
		return "elicitation"
	case "roots/list":
		return "roots"
	}
	return ""
}
