package codec

import (
	"bytes"
	"unsafe"
)

// Kind is the JSON-RPC message kind found by Peek.
type Kind uint8

const (
	KindInvalid      Kind = iota // not determined (error before it could be)
	KindRequest                  // "method" and "id"
	KindNotification             // "method", no "id" (GEN-07)
	KindResponse                 // no "method"; "result" or "error"
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// IDKind is the JSON type of a message's "id" member.
type IDKind uint8

const (
	IDNone    IDKind = iota // no "id" member
	IDString                // a JSON string
	IDNumber                // an integer (no fraction, no exponent)
	IDNull                  // null: accepted on responses only (GEN-05 REC)
	IDInvalid               // object, array, bool, fraction or exponent (GEN-03)
)

func (k IDKind) String() string {
	switch k {
	case IDNone:
		return "none"
	case IDString:
		return "string"
	case IDNumber:
		return "number"
	case IDNull:
		return "null"
	}
	return "invalid"
}

// DefaultMaxDepth is the nesting limit used when PeekConfig.MaxDepth is 0
// (RELIABILITY.md defaults table; A9).
const DefaultMaxDepth = 128

// MaxDepthLimit is the hard nesting cap: larger or negative
// PeekConfig.MaxDepth values are clamped to it.
const MaxDepthLimit = 4096

// Member names Peek looks at (MCP 2026-07-28, TRANSPORTS.md §1.2).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaProgressToken      = "progressToken"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// Envelope is what Peek records about one message. Every []byte and Str.Raw
// aliases the message buffer: they are valid only while that buffer is, and
// only until the next Peek into the same Envelope.
type Envelope struct {
	Kind   Kind
	ID     []byte // raw token of a valid "id" (`7`, `"abc"` with quotes); nil if absent, null or invalid
	IDKind IDKind
	Method Str
	Params []byte // raw span of the params object; nil if absent or not an object

	Name      Str    // params.name
	URI       Str    // params.uri
	Arguments []byte // raw span of params.arguments (any JSON value); nil if absent
	Meta      []byte // raw span of params._meta when it is an object; nil otherwise
	RequestID []byte // raw token of params.requestId when a string or integer (notifications/cancelled)

	ProtocolVersion    Str    // params._meta["io.modelcontextprotocol/protocolVersion"]
	NonStringVersion   bool   // that member is present but not a string
	ClientCapabilities []byte // raw span of params._meta["io.modelcontextprotocol/clientCapabilities"] when an object
	ProgressToken      []byte // raw token of params._meta.progressToken when a string or integer
	LogLevel           Str    // params._meta["io.modelcontextprotocol/logLevel"]
	ClientInfo         []byte // raw span of params._meta["io.modelcontextprotocol/clientInfo"] when an object (META-05: never trust it)

	HasResult, HasError bool

	// The members of Arguments when Peek read it as a flat compact object
	// (skipFlat), for ScanArguments: argN is their count plus one (0: not
	// recorded), args their name and value spans as offsets into Arguments,
	// which Rebase leaves valid; argAt and argLen are where Arguments
	// started and its length when they were recorded, so that an
	// Arguments a caller replaced is scanned instead (argAt is set with
	// Arguments, and read only when argN != 0).
	argN   uint8
	argLen uint16
	argAt  uintptr
	args   [maxArgMembers]argMember

	// tmpl is the generation of the PeekMemo template the message was
	// taken by (replay), 0 when it was read any other way: Template.
	tmpl uint64
}

// Template is the generation of the PeekMemo template Peek took the
// message by, or 0 when it was read any other way (no memo, no template,
// a miss, an error). A template's generation is given when the memo
// learns it, from one process-wide counter: no two templates, of one
// memo or of two, share one, and a memo that forgets its template or
// learns another never hits with the old generation again. Every
// message PeekWith or PeekLine takes without an error under one
// generation G != 0 is a request with a valid id whose Method, Name,
// ProtocolVersion, ClientInfo and ClientCapabilities are byte for byte
// the same as those of every other message taken under G, each present
// and unescaped (plain strings, flat objects), and which has no URI,
// LogLevel or RequestID and NonStringVersion false. The id, arguments
// and progressToken are the message's own. So whatever a caller decides
// from those members alone it may keep per generation, and use for
// another message of the same generation without reading them again
// (the engine's check: FuzzPeekTemplate holds the promise). Rebase keeps
// the generation (the copy holds the same bytes); an Envelope filled
// any other way (by hand, or cleared) has 0.
func (e *Envelope) Template() uint64 { return e.tmpl }

// maxArgMembers bounds the members of params.arguments Peek records (the
// fixture's echo has 1, EXAMPLES.md's tools/call 4). Each costs 8 bytes of
// every Envelope, which PeekWith zeroes per message: a table of 8 measured
// slower on the fixture than one of 4 (profiles/README.codec5.md).
const maxArgMembers = 4

// argMember is one recorded member of params.arguments: the name between
// its quotes, Arguments[k:ke], and the value, Arguments[v:ve], as four
// 16-bit offsets from the low end (k, ke, v, ve): one word to store.
type argMember uint64

func newArgMember(k, ke, v, ve int) argMember {
	return argMember(uint16(k)) | argMember(uint16(ke))<<16 | argMember(uint16(v))<<32 | argMember(uint16(ve))<<48
}

// ScanArguments is ScanMembers(e.Arguments, names, vals), with the same
// results and errors, without scanning the arguments again when Peek
// recorded their members (a flat compact object of at most maxArgMembers,
// 4, members whose names are plain ASCII: the usual arguments of a tool).
func (e *Envelope) ScanArguments(names []string, vals [][]byte) (int, error) {
	n := int(e.argN) - 1
	if n < 0 || len(e.Arguments) != int(e.argLen) || addrOf(e.Arguments) != e.argAt {
		return ScanMembers(e.Arguments, names, vals)
	}
	vals = vals[:len(names)]
	for i := 0; i < len(vals); i++ { // not the clear idiom: no call for a few names
		vals[i] = nil
	}
	a := e.Arguments
	for j := range n {
		m := e.args[j&(maxArgMembers-1)]
		key := a[uint16(m):uint16(m>>16)]
		for x, name := range names {
			if len(key) == len(name) && string(key) == name {
				if vals[x] != nil {
					return j + 1, ErrDuplicateKey
				}
				vals[x] = a[uint16(m>>32):uint16(m>>48)]
			}
		}
	}
	return n, nil
}

// PlainArguments returns the number of members of e.Arguments that Peek
// recorded, or -1 when it recorded none (ScanArguments then scans them).
// Recorded members are plain: every name, and every string value, is
// ASCII from 0x20 to 0x7f without a quote or a backslash (its body is the
// decoded string, and encodes back unchanged); every other value is a
// non-negative integer without fraction or exponent, true, false or null.
// PlainArgument gives them; ScanArguments reads the same
// (FuzzPlainArguments).
func (e *Envelope) PlainArguments() int {
	if e.argN == 0 || len(e.Arguments) != int(e.argLen) || addrOf(e.Arguments) != e.argAt {
		return -1
	}
	return int(e.argN) - 1
}

// PlainArgument returns the name (between its quotes) and the value of
// the recorded member j of e.Arguments, 0 <= j < e.PlainArguments(), in
// the order they appear; both alias e.Arguments.
func (e *Envelope) PlainArgument(j int) (name, value []byte) {
	m, a := e.args[j&(maxArgMembers-1)], e.Arguments
	return a[uint16(m):uint16(m>>16)], a[uint16(m>>32):uint16(m>>48)]
}

// KeepArguments gives e the members Peek recorded for src's arguments,
// when e.Arguments holds the same bytes as src.Arguments (the offsets are
// relative to the span), so that ScanArguments on an envelope built from
// another (the legacy bridge's derived one) need not scan them again.
// Otherwise e keeps what it has.
func (e *Envelope) KeepArguments(src *Envelope) {
	if src.argN == 0 || !bytes.Equal(e.Arguments, src.Arguments) {
		return
	}
	e.argN, e.argLen, e.args = src.argN, src.argLen, src.args
	e.argAt = addrOf(e.Arguments)
}

// addrOf is where p's bytes start, as a number: the recorded arguments
// compare it, so it keeps nothing alive.
func addrOf(p []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(p))) }

// Rebase re-points every span of e from old, the message Peek read, onto
// buf, a copy of old (same length, same bytes), so that e stays valid once
// old is reused. Spans already outside old are left as they are. A new span
// field must be added here: TestEnvelopeRebaseCoversEveryField fails until
// it is.
func (e *Envelope) Rebase(old, buf []byte) {
	base := addrOf(old)
	mv := func(p []byte) []byte {
		if p == nil {
			return nil
		}
		at := addrOf(p)
		if at < base || at-base+uintptr(len(p)) > uintptr(len(old)) {
			return p // not a span of old
		}
		off := int(at - base)
		return buf[off : off+len(p) : off+len(p)]
	}
	e.ID = mv(e.ID)
	e.Method.Raw = mv(e.Method.Raw)
	e.Params = mv(e.Params)
	e.Name.Raw = mv(e.Name.Raw)
	e.URI.Raw = mv(e.URI.Raw)
	recorded := e.argN != 0 && e.argAt == addrOf(e.Arguments)
	e.Arguments = mv(e.Arguments)
	if recorded {
		e.argAt = addrOf(e.Arguments) // the recorded members follow it
	}
	e.Meta = mv(e.Meta)
	e.RequestID = mv(e.RequestID)
	e.ProtocolVersion.Raw = mv(e.ProtocolVersion.Raw)
	e.ClientCapabilities = mv(e.ClientCapabilities)
	e.ProgressToken = mv(e.ProgressToken)
	e.LogLevel.Raw = mv(e.LogLevel.Raw)
	e.ClientInfo = mv(e.ClientInfo)
}

// PeekConfig tunes PeekWith.
type PeekConfig struct {
	// MaxDepth is the deepest container nesting accepted, counting the
	// top-level object as 1 (so "params" is 2 and "_meta" is 3).
	// 0 => DefaultMaxDepth (128). Negative or above MaxDepthLimit =>
	// MaxDepthLimit (4096); levels beyond 256 may cost an allocation when reached.
	MaxDepth int

	// Memo, when not nil, lets PeekWith skip the part of params._meta,
	// and of the request around its arguments, the previous message had
	// too (PeekMemo). It is written by each call:
	// calls that share a Memo must not run at the same time.
	Memo *PeekMemo
}

// genericPeek, as PeekConfig.Memo, turns the usual-shape readers
// (shape.go) off: PeekWith then reads every object with the object loop
// alone. For tests, which compare both ways of reading (FuzzPeekShape); a
// sentinel rather than a field, so that PeekConfig stays two words.
var genericPeek = new(PeekMemo)

// parser.generic's values but 0 (the usual-shape readers, then the object
// loop where they stop).
const (
	genericLoop uint8 = 1 + iota // the object loop alone (genericPeek)
	lineWalk                     // PeekLine: the readers alone
)

// Peek is PeekWith(msg, env, PeekConfig{}).
func Peek(msg []byte, env *Envelope) error {
	return PeekWith(msg, env, PeekConfig{})
}

// Semantic problems found while the syntax scan goes on; reported after it.
const (
	badDup uint8 = 1 << iota
	badVersion
	badMethod
	badParams
	sawVersion
	sawMethod
)

type parser struct {
	b   []byte
	env *Envelope
	max int // the depth limit (PeekConfig.MaxDepth, resolved)
	bad uint8
	// generic: no usual-shape readers (genericLoop, genericPeek's), or,
	// as lineWalk, PeekLine's walk: the usual-shape readers without the
	// object loop (which could step over a '\n' as whitespace), so members
	// and after decline with scanErrLine instead, and skipFlat takes no
	// whitespace. One field for both, so that PeekWith sets up its parser
	// as before.
	generic uint8
	// ws: skipArgs may have taken whitespace (before a ':' or a
	// separator). Set on those paths, never cleared: when it is false,
	// the arguments it read are compact (compactArgs would say so), and
	// PeekLine need not look at them again.
	ws   bool
	memo *PeekMemo // PeekConfig.Memo
	// tm and tv, when not 0, are where params read straight from its
	// start reached the '{' of _meta, and where meta read straight from
	// its start reached the end of clientCapabilities: top's learn
	// takes a template only from a message read so.
	tm, tv int
	// deep is the skippers' bit stack past their inline words, kept across
	// the skips of one Peek so that it grows once a message (MaxDepth > 256).
	deep []uint64
}

// skip runs the skipper on the value at b[i], inside containers nested
// depth deep. The skipper (64 bytes with its bit stack) is set up only here,
// off the usual path: Peek's own loops read the usual messages without it.
//
//go:noinline
func (p *parser) skip(b []byte, i, depth int) int {
	sk := skipper{max: p.max, deep: p.deep}
	e := sk.skip(b, i, depth)
	p.deep = sk.deep
	return e
}

// PeekWith validates msg and fills env in one pass, without allocating.
//
// Syntax: msg must be one RFC 8259 JSON value surrounded by nothing but
// whitespace, every string valid UTF-8 (GEN-02); otherwise ErrParse or
// ErrInvalidUTF8 (-32700) and env is left zeroed (A7, A8: no id to echo).
// Nesting beyond o.MaxDepth fails with ErrTooDeep as soon as it is reached;
// env.ID is kept when "id" came before the deep value (A9).
//
// Structure (checked only once the syntax is valid, in this order): a
// top-level array is ErrBatch (A11), any other non-object ErrNotObject; a
// recognised member that appears twice, or, at the top and params levels, a
// member name that is not a recognised one but case-folds to one under
// Unicode simple folding ("Method", "paramſ", "\u212Aind"-style Kelvin
// sign), is ErrDuplicateKey (A10, CVE-2026-27896). Inside params._meta a
// case variant ("io.modelcontextprotocol/ProtocolVersion") is an unknown
// key like any other and is never matched: the request then lacks the real
// key and gets what a missing key gets (META-02). Recognised members: jsonrpc, id, method, params,
// result, error at the top; name, uri, arguments, _meta, requestId in
// params; the Meta* names (protocolVersion, clientCapabilities, logLevel,
// clientInfo, progressToken) in params._meta. Names are compared after
// unescaping, so "\u006dethod" is "method". Then: "jsonrpc" not exactly
// "2.0" is ErrBadVersion (A12); a request id that is not a string or an
// integer is ErrBadID (GEN-03, A12; null is accepted on responses only);
// no "method", "result" or "error" is ErrNoMethod; a non-string method is
// ErrBadMethod; params that is not an object (null included) is
// ErrBadParams (A13); a response with both result and error is
// ErrBadResponse.
// On these errors env keeps whatever was read (Kind when determinable, a
// valid ID), so the error reply can echo the id (HVAL-03).
//
// Members that are not strings where a string is expected (name, uri,
// logLevel, protocolVersion) are left with Present == false.
func PeekWith(msg []byte, env *Envelope, o PeekConfig) error {
	var p parser // set field by field: a composite literal is built, then copied
	p.b, p.env, p.memo, p.max = msg, env, o.Memo, o.maxDepth()
	if o.Memo == genericPeek {
		p.generic = genericLoop
	}

	var end int
	c := byte('{')
	if p.generic == 0 && version20(msg) {
		// The memo's template first (replay writes every field of env),
		// else top (which clears env first).
		p.bad = sawVersion    // "jsonrpc": "2.0"
		e, kind := -1, IDNone // the id (top's): as in PeekLine, one digit by oneDigit first
		if len(msg) >= shapeHeadLen && word(msg, shapeHeadLen-8) == shapeHeadLast {
			if oneDigit(msg, shapeHeadLen) {
				e, kind = shapeHeadLen+1, IDNumber
			} else {
				if kind = IDNumber; len(msg) >= shapeHeadLen+8 {
					e = idWord(msg, shapeHeadLen)
				}
				if e < 0 {
					e, kind = idValue(msg, shapeHeadLen)
				}
			}
		}
		end = -1
		if m := o.Memo; m != nil && m.an != 0 && e >= 0 {
			end = p.replay(e, kind)
		}
		if end < 0 {
			end = p.top(e, kind)
		}
	} else {
		*env = Envelope{}
		i := skipWS(msg, 0)
		if i >= len(msg) {
			return ErrParse
		}
		if c = msg[i]; c == '{' {
			end = p.object(i+1, levelTop)
		} else {
			end = p.skip(msg, i, 0)
		}
	}
	msg, env = p.b, p.env // the same: loaded, not kept across the calls (spilled)
	if end < 0 {
		return p.fail(end)
	}
	if skipWS(msg, end) != len(msg) {
		*env = Envelope{}
		return ErrParse
	}
	switch c {
	case '{':
	case '[':
		return ErrBatch
	default:
		return ErrNotObject
	}
	if env.Kind == KindRequest || p.plainRequest() {
		// A hit of the template (replay wrote KindRequest), or finish's
		// answer without its checks.
		env.Kind = KindRequest
		return nil
	}
	return p.finish()
}

// maxDepth is o.MaxDepth resolved: the default for 0, the hard cap for a
// negative or larger one.
func (o PeekConfig) maxDepth() int {
	switch m := o.MaxDepth; {
	case m == 0:
		return DefaultMaxDepth
	case m < 0 || m > MaxDepthLimit:
		return MaxDepthLimit
	default:
		return m
	}
}

// PeekLine is PeekWith for the line transports, which frame each message
// as one line: buf holds the input from the start of a line on. When that
// line is a message in the usual shape (shape.go) read straight through,
// compact, without an error, and ends at its final '}' (then "\n" or
// "\r\n"), PeekLine fills env as PeekWith(line) would, line being buf
// up to that '}', and returns n, the index of the '\n': buf[:n] holds no
// other, since nothing the walk took can be one (no whitespace, no control
// byte in a string). So the line's end is found by the walk that reads it,
// not by a search of its own. Where the message leaves the usual shape
// (another order, whitespace, nested arguments), the walk cuts its buffer
// at the first '\n' and the object loop reads the rest of the line, as
// PeekWith would (cut); the index returned is then that '\n'. For
// anything else (a line that does not start as the usual shape does, any
// error, no '\n' yet) it returns -1 and env holds nothing of use: the
// caller then finds the line's end and calls PeekWith, which decides (and
// reports any error) as always. FuzzPeekLine checks both agree.
func PeekLine(buf []byte, env *Envelope, o PeekConfig) int {
	if !version20(buf) || o.Memo == genericPeek {
		return -1
	}
	var p parser // set field by field: a composite literal is built, then copied
	p.b, p.env, p.memo, p.generic, p.max = buf, env, o.Memo, lineWalk, o.maxDepth()
	// The memo's template first (replay writes every field of env), else
	// top (which clears env first).
	p.bad = sawVersion // "jsonrpc": "2.0"
	// The id, where shapeHead puts it: e past it (< 0 when the value
	// there is not a non-negative integer or a plain string) and its
	// kind, or -1 and IDNone without shapeHead. 1 to 6 digits are read
	// here by idWord (inline; a line's ids soon have more than one digit,
	// so oneDigit is not tried first, as PeekWith does), anything else
	// by idValue (a call: its scans, inline, would cost every message).
	e, kind := -1, IDNone
	if len(buf) >= shapeHeadLen && word(buf, shapeHeadLen-8) == shapeHeadLast {
		if kind = IDNumber; len(buf) >= shapeHeadLen+8 {
			e = idWord(buf, shapeHeadLen)
		}
		if e < 0 {
			e, kind = idValue(buf, shapeHeadLen)
		}
	}
	n := -1
	if m := o.Memo; m != nil && m.an != 0 && e >= 0 {
		n = p.replay(e, kind)
	}
	if n < 0 {
		n = p.top(e, kind)
	}
	if p.generic != lineWalk {
		// Cut (p.cut): the line is p.b, and the message must end there
		// but for whitespace, as PeekWith's on the line.
		if n < 0 || skipWS(p.b, n) != len(p.b) || p.finish() != nil {
			return -1
		}
		return len(p.b)
	}
	// No cut: p.b is buf. Both are loaded from p rather than kept across
	// top (spilled).
	buf, env = p.b, p.env
	if uint(n) >= uint(len(buf)) {
		return -1 // also n < 0
	}
	if buf[n] != '\n' {
		// "\r\n", or no line end.
		if buf[n] != '\r' {
			return -1
		}
		if n++; n >= len(buf) || buf[n] != '\n' {
			return -1
		}
	}
	if p.ws && !compactArgs(env) {
		// Arguments read by skipArgs, which took whitespace: compactArgs
		// decides. Without p.ws, it would say yes (TestPeekLineArgsWhitespace).
		return -1
	}
	if env.Kind == KindRequest {
		// A hit of the template: replay wrote finish's answer.
	} else if p.plainRequest() {
		env.Kind = KindRequest // finish's answer, without its checks
	} else if p.finish() != nil {
		return -1
	}
	return n
}

// cut ends PeekLine's walk where the message leaves the usual shape, at
// b[i], every byte before it read: from there the object loop goes on as
// PeekWith's would on the line, p.b cut to it. The line ends at the first
// '\n' of b, searched for here (as the framing would have); it must not
// lie before i (the arguments, read by skipArgs, may hold one). What was
// read so far is what PeekWith reads on the line: a compare or a scan that
// succeeded took no '\n' (none matches one), so it lies inside the line,
// and one that failed on b fails on the shorter line too. The readers
// that called the loop go on in their own b, the whole buffer: none of
// them can take the '\n' but skipArgs and skipFlat, and those only by
// stepping past it, so that the end PeekLine checks is past the line's
// (FuzzPeekLine compares with PeekWith on the line). It reports false,
// for PeekLine to decline, when there is no such line end.
//
//go:noinline
func (p *parser) cut(i int) bool {
	n := bytes.IndexByte(p.b, '\n')
	if n < i {
		return false // also n < 0: no line end yet
	}
	p.b = p.b[:n]
	p.generic = 0
	return true
}

// compactArgs reports whether env.Arguments, as skipArgs read it in
// PeekLine's walk, holds no whitespace: skipArgs, which PeekWith shares,
// takes it before a ':' or a separator (it only marks the parser, ws, on
// those paths; PeekLine calls this when the mark is set). Its recorded
// members are compact when each sits right after the one before; more
// than it records are looked at.
// The rest of the walk takes whitespace nowhere (skipFlat refuses it in
// PeekLine's, a PeekMemo never holds a '\n').
func compactArgs(env *Envelope) bool {
	a, n := env.Arguments, int(env.argN)-1
	if n <= 0 {
		// `{}` (n 0), none, or not recorded.
		return n == 0 || a == nil || bytes.IndexByte(a, '\n') < 0
	}
	// Name at [k:ke], value at [v:ve]: `{"` before the first, `":`
	// between, `,"` after each but the last, `}` after that.
	next := 2
	for _, m := range env.args[:min(n, maxArgMembers)] { // n is at most that
		if int(uint16(m)) != next || int(uint16(m>>32)) != int(uint16(m>>16))+2 {
			return false
		}
		next = int(uint16(m>>48)) + 2
	}
	return next-1 == len(a)
}

func (p *parser) fail(code int) error {
	switch code {
	case scanErrDeep:
		return ErrTooDeep
	case scanErrUTF8:
		*p.env = Envelope{}
		return ErrInvalidUTF8
	}
	*p.env = Envelope{}
	return ErrParse
}

// plainRequest reports whether the message read is a request with its
// "jsonrpc" ("2.0"), "method" (a string) and a valid id (a string or an
// integer), and nothing else wrong (no duplicate, no bad params): then
// finish would make it KindRequest and return nil (TestPlainRequest
// holds it to finish on every combination). It inlines, finish does not.
func (p *parser) plainRequest() bool {
	return p.bad == sawVersion|sawMethod && (p.env.IDKind == IDNumber || p.env.IDKind == IDString)
}

func (p *parser) finish() error {
	env := p.env
	if p.bad&sawMethod != 0 {
		if env.IDKind == IDNone {
			env.Kind = KindNotification
		} else {
			env.Kind = KindRequest
		}
	} else if env.HasResult || env.HasError {
		env.Kind = KindResponse
	}
	switch {
	case p.bad&badDup != 0:
		return ErrDuplicateKey
	case p.bad&sawVersion == 0 || p.bad&badVersion != 0:
		return ErrBadVersion
	case env.IDKind == IDInvalid || (env.IDKind == IDNull && env.Kind == KindRequest):
		return ErrBadID
	case env.Kind == KindInvalid:
		return ErrNoMethod
	case p.bad&badMethod != 0:
		return ErrBadMethod
	case p.bad&badParams != 0 && env.Kind != KindResponse:
		return ErrBadParams
	case env.Kind == KindResponse && env.HasResult && env.HasError:
		return ErrBadResponse
	}
	return nil
}

// object parses the members of the object at level (1 top, 2 params,
// 3 _meta) whose '{' is at b[i-1], records what it finds and returns the
// index just past its '}'. Members are read with the shared rules (a name,
// colon, a value, sep); a recognised name is matched by knownKey without
// scanning it, and values Peek does not inspect go through the skipper.
func (p *parser) object(i int, level int) int {
	// A key whose bit is set has been seen: a second one is a duplicate
	// (A10). keyFold's bit starts set, so a case variant always is one.
	return p.members(i, level, uint32(1)<<keyFold, keyLead[level&3])
}

// members is object's loop from b[i], just past the '{' or at the opening
// quote of a member's name, with the keys already seen at this level and
// the key guessed next: object starts it at the first member, the
// usual-shape readers (shape.go) where the message leaves the shape they
// expect.
func (p *parser) members(i int, level int, seen uint32, guess uint8) int {
	if p.generic == lineWalk && !p.cut(i) {
		return scanErrLine
	}
	b, env := p.b, p.env
	if i = skipWS(b, i); uint(i) < uint(len(b)) && b[i] == '}' {
		return i + 1
	}
	if uint(i) >= uint(len(b)) || b[i] != '"' {
		return scanErrParse
	}
	for {
		// Member name, its opening quote at b[i]: a recognised one
		// without a scan, else the string rule and classify.
		// The guessed key is checked here, by knownKey's compare written
		// out; any other name goes through memberName.
		k, m := int(guess), &keys[guess&31]
		n := int(m.n)
		e := i + 1 + n
		if !(e <= len(b) && e >= 8 && (word(b, e-8)^m.last)&m.lmask == 0 &&
			(n <= 8 || word(b, i+1) == m.first && (n <= 16 || word(b, i+9) == m.mid[0] && word(b, i+17) == m.mid[1] &&
				(n <= 32 || word(b, i+25) == m.mid[2] && (n <= 40 || word(b, i+33) == m.mid[3]))))) {
			if k, e = memberName(b, i+1, level); e < 0 {
				return e
			}
			m = &keys[k&31]
		}
		if i = colon(b, e); uint(i) >= uint(len(b)) {
			return scanErrParse // also when colon failed (i < 0)
		}
		c := b[i]
		if c <= ' ' {
			if i = skipWS(b, i); uint(i) >= uint(len(b)) {
				return scanErrParse
			}
			c = b[i]
		}
		if k != keyUnknown {
			if bit := uint32(1) << (k & 31); seen&bit != 0 {
				p.bad |= badDup // A10: reported once the syntax scan is done
				k = keyUnknown
			} else {
				seen |= bit
				guess = m.after
			}
		}

		// Member value.
		if c == '"' && k == keyJSONRPC && len(b)-i >= 8 && word(b, i)&(1<<40-1) == quoted20 {
			p.bad |= sawVersion // the usual spelling: no scan, no unescape
			i += 5
		} else if c == '"' {
			// String value: one scan, then record it if wanted.
			e, fl := plainString(b, i+1), uint8(0)
			if e < 0 {
				if e, fl = scanStringSlow(b, ^e, 0); e < 0 {
					return e
				}
			}
			if k != keyUnknown {
				s := Str{Raw: b[i+1 : e-1], Escaped: fl&strEscaped != 0, Present: true}
				switch k {
				case keyJSONRPC:
					p.bad |= sawVersion
					if !s.EqualString("2.0") {
						p.bad |= badVersion
					}
				case keyID:
					env.ID, env.IDKind = b[i:e], IDString
				case keyMethod:
					p.bad |= sawMethod
					env.Method = s
				case keyParams:
					p.bad |= badParams
				case keyResult:
					env.HasResult = true
				case keyError:
					env.HasError = true
				case keyName:
					env.Name = s
				case keyURI:
					env.URI = s
				case keyArguments:
					env.Arguments = b[i:e]
				case keyRequestID:
					env.RequestID = b[i:e]
				case keyProtocolVersion:
					env.ProtocolVersion = s
				case keyLogLevel:
					env.LogLevel = s
				case keyProgressToken:
					env.ProgressToken = b[i:e]
				}
				// keyMeta and keyClientCapabilities that are strings are
				// not objects: ignored.
			}
			i = e
		} else {
			switch k {
			case keyUnknown, keyArguments, keyClientCapabilities, keyResult, keyError, keyClientInfo:
				// An empty object or array ("clientCapabilities":{}, the
				// arguments of a tool without parameters) needs no skipper.
				// A flat compact object (arguments of scalars, clientInfo)
				// takes skipFlat's shorter loop.
				e := i + 2
				if c != '{' && c != '[' || e > len(b) || b[i+1] != c+2 || p.max <= level {
					e = -1
					if c == '{' && p.max > level {
						if k == keyArguments {
							if e = p.skipArgs(b, i); e >= 0 {
								e += i
							}
						} else {
							e = p.skipFlat(b, i+1)
						}
					}
					if e < 0 {
						if e = p.skip(b, i, level); e < 0 {
							return e
						}
						if k == keyArguments && len(b)-e < 8 {
							// Arguments that end the message: skipArgs'
							// word-at-a-time strings give up there.
							p.recordTail(b, i, e)
						}
					}
				}
				switch k {
				case keyArguments:
					env.Arguments = b[i:e]
					if e == i+2 && c == '{' {
						env.argN, env.argLen = 1, 2 // {}: recorded, no members
					}
					env.argAt = addrOf(env.Arguments) // read only when argN != 0
				case keyClientCapabilities:
					if c == '{' {
						env.ClientCapabilities = b[i:e]
					}
				case keyClientInfo:
					if c == '{' {
						env.ClientInfo = b[i:e]
					}
				case keyResult:
					env.HasResult = true
				case keyError:
					env.HasError = true
				}
				i = e
			case keyParams, keyMeta:
				if c != '{' {
					if k == keyParams {
						p.bad |= badParams
					}
					i = p.skip(b, i, level)
					break
				}
				if p.max <= level {
					return scanErrDeep
				}
				// The usual-shape readers take the object when it
				// starts as they expect.
				var e int
				switch {
				case p.generic != 0:
					e = p.object(i+1, level+1)
				case k == keyParams && paramsShape(b, i+1):
					e = p.params(i + 1)
				case k == keyMeta && p.metaShape(i):
					e = p.meta(i + 1)
				default:
					e = p.object(i+1, level+1)
				}
				if e < 0 {
					return e
				}
				if k == keyParams {
					env.Params = b[i:e]
				} else {
					env.Meta = b[i:e]
				}
				i = e
			case keyID, keyRequestID, keyProgressToken:
				// A non-negative integer, the usual id and progress token,
				// is recorded here; anything else goes through token.
				e := plainNumber(b, i)
				if e < 0 {
					i = p.token(k, i, c, level)
					break
				}
				switch k {
				case keyID:
					env.ID, env.IDKind = b[i:e], IDNumber
				case keyRequestID:
					env.RequestID = b[i:e]
				default:
					env.ProgressToken = b[i:e]
				}
				i = e
			default:
				// A string was expected (jsonrpc, method, name, uri,
				// protocolVersion, logLevel) and something else came.
				switch k {
				case keyJSONRPC:
					p.bad |= badVersion | sawVersion
				case keyMethod:
					p.bad |= badMethod | sawMethod
				case keyProtocolVersion:
					env.NonStringVersion = true
				}
				i = p.skip(b, i, level)
			}
			if i < 0 {
				return i
			}
		}

		// Separator and the next name's opening quote: `,"` in compact
		// JSON, read at once; whitespace after the ',' is rare.
		if i+2 <= len(b) && half(b, i) == ','|'"'<<8 {
			i++
			continue
		}
		if i, c = sep(b, i); c == ',' {
			if i = skipWS(b, i); uint(i) >= uint(len(b)) || b[i] != '"' {
				return scanErrParse
			}
			continue
		}
		if c == '}' {
			return i
		}
		return scanErrParse
	}
}

// memberName reads the member name whose opening quote is at b[i-1] when
// the object loop's guess did not match: a recognised name by knownKey,
// anything else by the string rule and classify. It returns the key and
// the index past the closing quote, or a negative scanErr* value.
func memberName(b []byte, i, level int) (int, int) {
	k, e := knownKey(b, i, level)
	if e >= 0 {
		return k, e
	}
	var fl uint8
	if e = plainString(b, i); e < 0 {
		if e, fl = scanStringSlow(b, ^e, 0); e < 0 {
			return keyUnknown, e
		}
	}
	return classify(b[i:e-1], fl, level), e
}

// token handles a non-string value, first byte c at b[i], of "id",
// "requestId" or "progressToken": an integer is recorded, anything else is
// skipped (and classified, for "id": GEN-03).
func (p *parser) token(k, i int, c byte, level int) int {
	b, env := p.b, p.env
	if c == '-' || c-'0' <= 9 {
		e, isInt := plainNumber(b, i), true
		if e < 0 {
			e, isInt = scanNumber(b, i)
		}
		if e < 0 {
			return e
		}
		switch {
		case !isInt:
			if k == keyID {
				env.IDKind = IDInvalid
			}
		case k == keyID:
			env.ID, env.IDKind = b[i:e], IDNumber
		case k == keyRequestID:
			env.RequestID = b[i:e]
		default:
			env.ProgressToken = b[i:e]
		}
		return e
	}
	if k == keyID {
		if c == 'n' {
			env.IDKind = IDNull
			return scanLiteral(b, i)
		}
		env.IDKind = IDInvalid
	}
	return p.skip(b, i, level)
}

// quoted20 is `"2.0"` as the low 5 bytes of a little-endian word: the
// usual "jsonrpc" value, compared without a scan (a shorter tail of the
// buffer takes the general path).
const quoted20 = '"' | '2'<<8 | '.'<<16 | '0'<<24 | '"'<<32

// skipFlat skips the object whose '{' is at b[i-1] when it is flat and
// compact, the usual shape of a tool's arguments and of clientInfo: names
// and string values in plain ASCII without escapes, non-negative integers,
// true, false and null, no whitespace but before a ':' or a separator. It
// returns the index just past its '}', or -1 for anything else (a nested
// value, an escape, a syntax error...): the caller then runs the skipper,
// which decides. Nothing it accepts is refused by the skipper, and it
// opens no container, so the depth limit is the caller's check for the
// object itself.
func (p *parser) skipFlat(b []byte, i int) int {
	if uint(i) >= uint(len(b)) || b[i] != '"' {
		return -1
	}
	i++
	for {
		// A member, i just past its name's opening quote.
		if i = plainString(b, i); i < 0 {
			return -1
		}
		if uint(i) < uint(len(b)) && b[i] == ':' {
			i++ // compact
		} else if p.generic == lineWalk {
			return -1 // colon would take whitespace
		} else {
			i = colon(b, i)
		}
		if uint(i) >= uint(len(b)) {
			return -1 // also when colon failed (i < 0)
		}
		switch c := b[i]; {
		case c == '"':
			i = plainString(b, i+1)
		case c-'0' <= 9:
			i = plainNumber(b, i)
		case c == 't' || c == 'f' || c == 'n':
			i = scanLiteral(b, i)
		default:
			return -1
		}
		if i < 0 {
			return -1
		}
		if i+2 <= len(b) && half(b, i) == ','|'"'<<8 {
			i += 2 // the usual `,"` before the next name
			continue
		}
		var sc byte
		if uint(i) < uint(len(b)) && b[i] > ' ' {
			i, sc = i+1, b[i] // compact
		} else if p.generic == lineWalk {
			return -1 // sep would take whitespace
		} else {
			i, sc = sep(b, i)
		}
		if sc == '}' {
			return i
		}
		if sc != ',' || uint(i) >= uint(len(b)) || b[i] != '"' {
			return -1
		}
		i++
	}
}

// recordTail records the members of the arguments object b[o:end] as
// skipArgs would, for arguments that skipArgs gave up on because they end
// within 8 bytes of the message's end (a plain string's word-at-a-time
// scan needs 8 bytes): the same shapes (flat, compact, plain), read by the
// string rule, which needs no word past the end. The skipper has already
// validated the object. Off the usual path: it runs only then.
//
//go:noinline
func (p *parser) recordTail(b []byte, o, end int) {
	env := p.env
	a := b[:end]
	n := 0
	i := o + 1
	if i >= len(a) || a[i] != '"' {
		return
	}
	i++
	for {
		k := i
		e, fl := scanString(a, k)
		if e < 0 || fl != 0 {
			return
		}
		ke := e - 1
		if i = colon(a, e); uint(i) >= uint(len(a)) {
			return
		}
		v := i
		switch c := a[i]; {
		case c == '"':
			if i, fl = scanString(a, i+1); fl != 0 {
				return
			}
		case c-'0' <= 9:
			i = plainNumber(a, i)
		case c == 't' || c == 'f' || c == 'n':
			i = scanLiteral(a, i)
		default:
			return
		}
		if i < 0 || n >= maxArgMembers {
			return
		}
		env.args[n] = newArgMember(k-o, ke-o, v-o, i-o)
		n++
		if i+2 <= len(a) && half(a, i) == ','|'"'<<8 {
			i += 2
			continue
		}
		var sc byte
		if i, sc = sep(a, i); sc == '}' {
			if i == end && i-o <= 0xffff {
				env.argN, env.argLen = uint8(n+1), uint16(i-o)
			}
			return
		}
		if sc != ',' || uint(i) >= uint(len(a)) || a[i] != '"' {
			return
		}
		i++
	}
}

// skipArgs is skipFlat for params.arguments, whose '{' is at b[o]: it also
// records the members in p.env for ScanArguments when they fit (at most
// maxArgMembers, the object at most 64 KiB). It returns what skipFlat
// would less o (the object's length), or -1.
func (p *parser) skipArgs(b []byte, o int) int {
	// The arguments, read as a from their '{' (a[0]) on: an index in a
	// is the offset recorded, and a word read needs 8 bytes left of a as
	// of b (the same end).
	if uint(o) >= uint(len(b)) {
		return -1
	}
	a := span(unsafe.Pointer(unsafe.SliceData(b)), len(b), o, len(b)) // b[o:len(b):len(b)], o < len(b)
	n := 0
	i := 1
	if 1 >= len(a) || a[1] != '"' {
		return -1
	}
	i++
	for {
		// A member, i just past its name's opening quote.
		// The member's word (newArgMember's), built as its offsets are
		// found: fewer values live across the scans.
		k := i
		if i = plainString(a, k); i < 0 {
			return -1
		}
		w := argMember(uint16(k)) | argMember(uint16(i-1))<<16
		if i+2 <= len(a) && half(a, i) == ':'|'"'<<8 {
			// The usual `:"` before a string value.
			w |= argMember(uint16(i+1)) << 32
			i = plainString(a, i+2)
		} else {
			if uint(i) >= uint(len(a)) || a[i] != ':' {
				p.ws = true // colon takes whitespace before the ':'
			}
			if i = colon(a, i); uint(i) >= uint(len(a)) {
				return -1 // also when colon failed (i < 0)
			}
			w |= argMember(uint16(i)) << 32
			switch c := a[i]; {
			case c == '"':
				i = plainString(a, i+1)
			case c-'0' <= 9:
				i = plainNumber(a, i)
			case c == 't' || c == 'f' || c == 'n':
				i = scanLiteral(a, i)
			default:
				return -1
			}
		}
		if i < 0 {
			return -1
		}
		if uint(n) < maxArgMembers {
			p.env.args[n] = w | argMember(uint16(i))<<48
		}
		n++
		if uint(i) < uint(len(a)) && a[i] == '}' {
			// The usual end, compact (as the end below, without sep's
			// byte to test).
			if i++; n <= maxArgMembers && i <= 0xffff {
				p.env.argN, p.env.argLen = uint8(n+1), uint16(i)
			}
			return i
		}
		if i+2 <= len(a) && half(a, i) == ','|'"'<<8 {
			i += 2 // the usual `,"` before the next name
			continue
		}
		p.ws = true // sep takes whitespace before the separator
		var sc byte
		if i, sc = sep(a, i); sc == '}' {
			if n <= maxArgMembers && i <= 0xffff {
				p.env.argN, p.env.argLen = uint8(n+1), uint16(i)
			}
			return i
		}
		if sc != ',' || uint(i) >= uint(len(a)) || a[i] != '"' {
			return -1
		}
		i++
	}
}
