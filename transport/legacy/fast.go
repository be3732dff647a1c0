package legacy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// The fasthttp fast path. streamhttp's fasthttp front end hands a request
// of a mount whose handler has a ServeFastHTTP method to that method
// first; this one serves the common case there — a request (tools/call
// and the rest) of a live session, with ordinary headers — without
// building a net/http request, copying the body or starting a goroutine,
// and declines everything else untouched (initialize, GET, DELETE,
// notifications, responses, the session's own methods, anything odd or
// wrong in the headers or the body), which then takes ServeHTTP's way,
// where every refusal is answered and counted. The two ways give the same
// answers: the fast one only skips the work.
//
// What it saves per call: the net/http request and its header map, the
// handler goroutine, the body copy, the decoding of the message into a
// struct (codec.Peek reads it in place), the response buffer (the answer
// is encoded into pooled working space and copied once into fasthttp's
// response) and the call (pooled). The session is found in this
// process's table and read from the store as on the net/http way: the
// store stays the truth on every call (a DELETE, an expiry or a change
// made by another replica is seen at once), while its decoded record and
// encoded _meta are kept with the session and reused as long as the
// store's version of the record has not moved.

// handler is Server.Handler: ServeHTTP, and the fast path for streamhttp.
type handler struct{ s *Server }

func (h handler) ServeHTTP(w http.ResponseWriter, req *http.Request) { h.s.ServeHTTP(w, req) }

// ServeFastHTTP serves rc when it is the common case (see above) and
// reports whether it did; false means nothing was written or changed.
// ctx carries what the front end's authentication established (read by
// Config.Principal). For streamhttp's Config.Mounts; not a public API.
func (h handler) ServeFastHTTP(ctx context.Context, rc *fasthttp.RequestCtx) bool {
	return h.s.serveFast(ctx, rc, nil)
}

// ServeFastFields lets streamhttp's mount hand over the four header fields
// from its own walk of them (its fieldMount): when exact, vals and n are
// each field's last value and its lines (counted up to 2) in the order of
// fastNames (streamhttp's mountFieldNames: TestFastNamesOrder), as scan
// would find them in the raw block; otherwise (a folded or merged line,
// or a body not framed by its Content-Length) serveFast scans the raw
// block itself. Not a public API.
func (h handler) ServeFastFields(ctx context.Context, rc *fasthttp.RequestCtx, vals [4][]byte, n [4]uint8, exact bool) bool {
	if !exact {
		return h.s.serveFast(ctx, rc, nil)
	}
	f := fastHeaders{sid: vals[0], ver: vals[1], ctype: vals[2], accept: vals[3], n: n}
	return h.s.serveFast(ctx, rc, &f)
}

// fastReq is one fast request's working space, pooled.
type fastReq struct {
	env  codec.Envelope
	m    wire
	sink fastSink // handed to rounds by pointer: a fastSink value would be boxed (allocated) on every call
	msg  []byte   // the engine's message
	out  []byte   // the answer
}

var fastPool = sync.Pool{New: func() any { return &fastReq{msg: make([]byte, 0, 1024), out: make([]byte, 0, 1024)} }}

// serveFast is ServeFastHTTP; pre, when not nil, is the request's header
// fields as scan would read them (ServeFastFields); when nil, serveFast
// scans the raw block.
func (s *Server) serveFast(ctx context.Context, rc *fasthttp.RequestCtx, pre *fastHeaders) bool {
	if s.closing.Load() || !rc.IsPost() {
		return false
	}
	body := rc.PostBody()
	var h fastHeaders
	if pre != nil {
		h = *pre
		if h.n[0] > 1 || h.n[1] > 1 || h.n[2] > 1 || h.n[3] > 1 {
			return false // scan's false: a second line of one of them
		}
	} else if !h.scan(rc.Request.Header.RawHeaders()) {
		return false
	}
	if !h.plain() {
		return false
	}
	if len(body) > s.cfg.MaxBodyBytes {
		return false
	}
	fr := fastPool.Get().(*fastReq)
	defer func() {
		fr.env, fr.m, fr.sink = codec.Envelope{}, wire{}, fastSink{}
		if cap(fr.msg) > 64<<10 {
			fr.msg = make([]byte, 0, 1024)
		}
		if cap(fr.out) > 64<<10 {
			fr.out = make([]byte, 0, 1024)
		}
		fastPool.Put(fr)
	}()
	env := &fr.env
	if codec.PeekWith(body, env, codec.PeekConfig{MaxDepth: s.maxDepth}) != nil ||
		env.Kind != codec.KindRequest || env.Method.Escaped || !plainID(env) {
		return false
	}
	method := internMethod(env.Method.Raw)
	switch method {
	case "", "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return false // not known here, or the session's own (ServeHTTP)
	}
	principal := s.cfg.Principal(ctx)
	pkey := principalOf(principal)
	s.mu.RLock()
	ss := s.sessions[string(h.sid)]
	s.mu.RUnlock()
	if ss == nil || ss.principal != pkey || ss.local {
		return false // first seen here (another replica made it), or not the caller's
	}
	_, head, err := s.lookupIn(ctx, pkey, ss.id, ss)
	if err != nil {
		return false // ServeHTTP looks again and answers 404 or 503
	}
	s.stats.Requests.Add(1)
	m := &fr.m
	m.JSONRPC, m.ID, m.Method, m.Params = "2.0", env.ID, method, env.Params
	limitKey := ""
	if ownerOf(principal) == "" {
		limitKey = s.callerAddr(rc.RemoteAddr()) // as ServeHTTP's callerIP
	}
	// The in-flight key is the id's bytes in the body, not a copy: it is
	// in ss.calls only until rounds removes it, before this returns and
	// fasthttp reuses the body; the stream way below re-keys the call
	// under a copy before it returns (keepKey).
	key := unsafe.String(unsafe.SliceData(m.ID), len(m.ID))
	fr.sink = fastSink{rc: rc, meta: s.cfg.ResourceMetadata}
	sink := &fr.sink
	c, ce := s.begin(ss, key, m, nil, principal, limitKey, fr.msg, head, env)
	if ce != nil {
		sink.final(encodeError(m.ID, ce))
		return true
	}
	// As the modern endpoint does: wait here for the answer or the first
	// notification; only the second makes the response a stream.
	notes, reply, done := c.peek()
	for notes == 0 && reply == nil && !done {
		<-c.wake // pump looks for itself before it waits
		notes, reply, done = c.peek()
	}
	if notes == 0 && (reply == nil || !asksInput(reply, m.ID)) {
		s.rounds(ctx, sink, ss, m, key, principal, limitKey, c, &fr.out)
		return true
	}
	// A notification came first, or the tool asks for input: an SSE
	// stream, written once this handler has returned. What it keeps of
	// the request is copied (fasthttp reuses it).
	mc := &wire{JSONRPC: "2.0", ID: bytes.Clone(m.ID), Method: m.Method, Params: bytes.Clone(m.Params)}
	key = ss.keepKey(key, c)
	rc.SetStatusCode(200)
	rc.Response.Header.Set("Content-Type", "text/event-stream")
	rc.Response.Header.Set("Cache-Control", "no-cache")
	rc.Response.Header.Set("X-Accel-Buffering", "no")
	rc.Response.ImmediateHeaderFlush = true
	conn := rc.Conn() // never the RequestCtx in the stream writer
	rc.SetBodyStreamWriter(func(bw *bufio.Writer) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w := &streamWriter{bw: bw, conn: conn}
		out := &sse{w: w, rc: http.NewResponseController(w), idle: s.cfg.WriteIdleTimeout, meta: s.cfg.ResourceMetadata, started: true}
		s.rounds(sctx, out, ss, mc, key, principal, limitKey, c, nil)
	})
	return true
}

// peek is take without taking: what is queued, for a look.
func (c *call) peek() (notes int, reply *outcome, done bool) {
	c.mu.Lock()
	c.looked = true
	notes, reply, done = len(c.notes), c.reply, c.done
	c.mu.Unlock()
	return notes, reply, done
}

// asksInput reports whether an engine response to id is an MRTR
// input_required result.
func asksInput(o *outcome, id []byte) bool {
	if _, ok := o.complete(id); ok {
		return false
	}
	rt, _ := codec.LookupPath(o.frame, "result", "resultType")
	return string(rt) == `"input_required"`
}

// plainID reports whether the request's id is one parse accepts: a string,
// or an integer that fits an int64.
func plainID(env *codec.Envelope) bool {
	switch env.IDKind {
	case codec.IDString:
		return true
	case codec.IDNumber:
		return len(env.ID) <= 18 // 18 digits, or a sign and 17: always an int64
	}
	return false
}

// internMethod returns the method's name without allocating for the
// methods a session's requests carry; "" for any other (ServeHTTP's way).
func internMethod(b []byte) string {
	switch string(b) {
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "resources/read":
		return "resources/read"
	case "resources/list":
		return "resources/list"
	case "resources/templates/list":
		return "resources/templates/list"
	case "prompts/get":
		return "prompts/get"
	case "prompts/list":
		return "prompts/list"
	case "completion/complete":
		return "completion/complete"
	}
	return ""
}

// callerAddr is callerIP for a fasthttp request's remote address: a
// loopback TCP peer without a zone names no caller without formatting it.
func (s *Server) callerAddr(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && t.Zone == "" && !s.countLoopback {
		if ip, ok := netip.AddrFromSlice(t.IP); ok && ip.Unmap().IsLoopback() {
			return ""
		}
	}
	str := a.String()
	host, _, err := net.SplitHostPort(str)
	if err != nil {
		host = str
	}
	return netutil.CallerIP(host, s.countLoopback)
}

// fastHeaders are the request headers this endpoint reads, from the raw
// block.
type fastHeaders struct {
	sid, ver, ctype, accept []byte
	n                       [4]uint8 // lines of each
}

// scan reads raw (fasthttp's raw header block): false when it has two
// lines of one of them (ServeHTTP refuses that, F2) or a folded line.
// One pass: a line's first letter, then the byte where the colon of one
// of the four names would be, decide whether it is compared at all; no
// other line is looked at past its end.
func (h *fastHeaders) scan(raw []byte) bool {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			return false // a folded line
		}
		i := -1
		switch line[0] | 0x20 {
		case 'm':
			if nameAt(line, HeaderSession) {
				i = 0
			} else if nameAt(line, HeaderProtocol) {
				i = 1
			}
		case 'c':
			if nameAt(line, "Content-Type") {
				i = 2
			}
		case 'a':
			if nameAt(line, "Accept") {
				i = 3
			}
		}
		if i < 0 {
			continue
		}
		if !h.set(i, trimSpaceTab(line[len(fastNames[i])+1:])) {
			return false
		}
	}
	return true
}

// set records v as the value of field i (the order of fastNames); it
// reports false on the field's second line.
func (h *fastHeaders) set(i int, v []byte) bool {
	switch i {
	case 0:
		h.sid = v
	case 1:
		h.ver = v
	case 2:
		h.ctype = v
	case 3:
		h.accept = v
	}
	h.n[i]++
	return h.n[i] == 1
}

// fastNames are the names of fastHeaders' fields, in the order of n.
var fastNames = [4]string{HeaderSession, HeaderProtocol, "Content-Type", "Accept"}

// nameAt reports whether line is a field named name (any case): name,
// then the colon that ends it.
func nameAt(line []byte, name string) bool {
	return len(line) > len(name) && line[len(name)] == ':' && equalFoldASCII(line[:len(name)], name)
}

// equalFoldASCII is bytes.EqualFold(b, []byte(s)) for an ASCII s, without
// decoding runes when the lengths are equal (the common case: a header
// name cut to the length of the one it is compared with, a value with the
// length of the one expected). There the two agree byte for byte: a rune
// that Unicode folds to an ASCII letter without being one (the Kelvin sign
// to k, the long s to s) takes two or three bytes for the one of s, so it
// cannot fit in an equal length, and an invalid byte folds to nothing.
// Other lengths take bytes.EqualFold's way. Eight bytes are compared at a
// time (foldWord). FuzzEqualFoldASCII holds it to bytes.EqualFold.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return bytes.EqualFold(b, []byte(s))
	}
	n := len(s)
	if n < 8 {
		for i := 0; i < n; i++ {
			c, d := b[i], s[i]
			if c != d && (c|0x20 != d|0x20 || c|0x20 < 'a' || c|0x20 > 'z') {
				return false
			}
		}
		return true
	}
	sb := unsafe.Slice(unsafe.StringData(s), n)
	for i := 0; i < n-8; i += 8 {
		if !foldWord(binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(sb[i:])) {
			return false
		}
	}
	// The last eight, overlapping the words before when n is not a multiple of 8.
	return foldWord(binary.LittleEndian.Uint64(b[n-8:]), binary.LittleEndian.Uint64(sb[n-8:]))
}

// foldWord reports whether the eight bytes of x equal those of the ASCII
// y but for case: they may differ only in the 0x20 bit, and only where y's
// byte is a letter. letters has 0x20 in each byte where y|0x20 is in
// 'a'..'z': adding 0x1f sets a byte's high bit from 0x61 up, adding 0x05
// from 0x7b up (y's bytes are below 0x80, so no sum carries into the next
// byte).
func foldWord(x, y uint64) bool {
	const hi = 0x8080808080808080
	low := y | 0x2020202020202020
	letters := (((low + 0x1f1f1f1f1f1f1f1f) &^ (low + 0x0505050505050505)) & hi) >> 2
	return (x^y)&^letters == 0
}

// trimSpace is bytes.TrimSpace, without its rune decoding when v begins
// and ends with an ASCII byte that is not white space (the common case:
// nothing to trim).
func trimSpace(v []byte) []byte {
	if len(v) > 0 && asciiNonSpace(v[0]) && asciiNonSpace(v[len(v)-1]) {
		return v
	}
	return bytes.TrimSpace(v)
}

// asciiNonSpace reports whether c is an ASCII byte that unicode.IsSpace
// does not take (it takes \t, \n, \v, \f, \r and the space below 0x80).
func asciiNonSpace(c byte) bool {
	return c < 0x80 && c != ' ' && (c < '\t' || c > '\r')
}

// trimSpaceTab is bytes.Trim(v, " \t") without building its cutset.
func trimSpaceTab(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// plain reports whether the headers are the ordinary ones ServeHTTP
// accepts: a session, a served revision or none, Content-Type
// application/json without parameters, an Accept listing one of the two
// types or */* without parameters, or none.
func (h *fastHeaders) plain() bool {
	if len(h.sid) == 0 || !isType(h.ctype, "application/json") {
		return false
	}
	if len(h.ver) > 0 && !knownVersion(h.ver) {
		return false
	}
	if h.n[3] == 0 || len(h.accept) == 0 {
		return true
	}
	for a := h.accept; len(a) > 0; {
		part := a // bytes.Cut at the comma, without its bytes.Index
		if i := bytes.IndexByte(a, ','); i >= 0 {
			part, a = a[:i], a[i+1:]
		} else {
			a = nil
		}
		part = trimSpace(part)
		if isType(part, "application/json") || isType(part, "text/event-stream") || string(part) == "*/*" {
			return true
		}
	}
	return false
}

// isType is equalFoldASCII(v, t) for a media type t, with the spelling
// clients send, t's own bytes, compared first (one inline compare).
func isType(v []byte, t string) bool {
	return string(v) == t || equalFoldASCII(v, t)
}

func knownVersion(v []byte) bool {
	for _, k := range Versions {
		if string(v) == k {
			return true
		}
	}
	return false
}

// fastSink is the sink of a request answered on the fasthttp goroutine:
// one JSON body (a notification first makes it a stream, never this).
type fastSink struct {
	rc   *fasthttp.RequestCtx
	meta string // Config.ResourceMetadata, for a 403's challenge
}

func (f fastSink) event([]byte) error { return errNoStream }
func (f fastSink) comment() error     { return errNoStream }

func (f fastSink) final(frame []byte) { f.send(200, frame) }

func (f fastSink) finalStatus(frame []byte, status int) {
	switch status {
	case 503:
		f.send(503, frame)
	case 429:
		retry := []byte("1")
		if v, ok := codec.LookupPath(frame, "error", "data", "retryAfter"); ok {
			retry = v
		}
		f.rc.Response.Header.SetBytesV("Retry-After", retry)
		f.send(429, frame)
	case 403:
		if ch := scopeChallenge(frame, f.meta); ch != nil {
			f.rc.Response.Header.SetBytesV("WWW-Authenticate", ch)
		}
		f.send(403, frame)
	default:
		f.send(200, frame)
	}
}

func (f fastSink) send(status int, frame []byte) {
	f.rc.SetStatusCode(status)
	f.rc.SetContentType("application/json")
	f.rc.SetBody(frame)
}

var errNoStream = http.ErrNotSupported

// streamWriter is the http.ResponseWriter an sse writes a fast request's
// stream through: fasthttp's body stream writer, and the connection's
// write deadline (http.ResponseController). The headers were sent before.
type streamWriter struct {
	bw   *bufio.Writer
	conn net.Conn
}

func (w *streamWriter) Header() http.Header                { return http.Header{} }
func (w *streamWriter) WriteHeader(int)                    {}
func (w *streamWriter) Write(p []byte) (int, error)        { return w.bw.Write(p) }
func (w *streamWriter) FlushError() error                  { return w.bw.Flush() }
func (w *streamWriter) SetWriteDeadline(t time.Time) error { return w.conn.SetWriteDeadline(t) }
