package codec

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// The usual shape of a request, read straight through.
//
// Most requests a server gets come from one client library, which writes
// the members of each object in one order, compact: the standard fixture
// (bench/wrk/fixture.lua) is
//
//	{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",
//	"arguments":{…},"_meta":{"io.modelcontextprotocol/protocolVersion":"…",
//	"io.modelcontextprotocol/clientInfo":{…},
//	"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}
//
// (a notification has no "id"; params may also start with "_meta", then
// "name" and "arguments", as the Python and Go SDKs write a tools/call's).
// The readers below expect that order at each of the three levels Peek
// inspects, and compare each member's separator, name and colon (and the
// opening byte of its value where it is fixed) as a few whole words against
// a pattern, then read the value with the shared rules and record it as
// the object loop would: no key table, no guess, no dispatch on the key.
// Where the message leaves the shape (another order, whitespace, an escape,
// a value of another type, a depth limit) they hand the rest of the level
// to the object loop (members), with the keys already read marked seen, at
// the member they could not read; the loop then reads the message exactly
// as it would have from the start (FuzzPeekShape compares both on any
// input). Each level is tried on its own: params in another order still
// gets the _meta reader.

// pattern is a byte string compared at an index a word at a time: its
// words at 0, 8, 16, 24 and 32 (those that start before the last word),
// then the word that ends it, overlapping the one before. 8 to 48 bytes.
type pattern struct {
	w    [5]uint64
	last uint64
	n    int
	s    string
}

func newPattern(s string) pattern {
	if len(s) < 8 || len(s) > 48 {
		panic("codec: pattern of 8 to 48 bytes: " + s)
	}
	var q pattern
	q.n, q.s = len(s), s
	var buf [48]byte
	copy(buf[:], s)
	for j := range q.w {
		q.w[j] = word(buf[:], 8*j)
	}
	q.last = word([]byte(s), len(s)-8)
	return q
}

// short reports whether b[i:] starts with q (0 <= i) for a q of at most
// 16 bytes, by its first and last words; false for a longer q (so a wrong
// choice of reader only costs the usual shape). It inlines, as medium does.
func (q *pattern) short(b []byte, i int) bool {
	n := q.n
	return n <= 16 && i+n <= len(b) && word(b, i) == q.w[0] && word(b, i+n-8) == q.last
}

// medium is short for a q of 17 to 24 bytes (false for a longer q).
func (q *pattern) medium(b []byte, i int) bool {
	n := q.n
	return n <= 24 && i+n <= len(b) && word(b, i) == q.w[0] && word(b, i+8) == q.w[1] && word(b, i+n-8) == q.last
}

// lead reports whether b[i:] starts with q's first word (0 <= i): a
// first test, inline, before a call that compares the rest.
func (q *pattern) lead(b []byte, i int) bool {
	return i+8 <= len(b) && word(b, i) == q.w[0]
}

// at reports whether b[i:] starts with q (0 <= i), for any q.
func (q *pattern) at(b []byte, i int) bool {
	n := q.n
	return i+n <= len(b) && word(b, i+n-8) == q.last && word(b, i) == q.w[0] &&
		(n <= 16 || word(b, i+8) == q.w[1] && (n <= 24 || word(b, i+16) == q.w[2] &&
			(n <= 32 || word(b, i+24) == q.w[3] && (n <= 40 || word(b, i+32) == q.w[4]))))
}

// shapeJSONRPC is how the usual message starts.
const shapeJSONRPC = `{"jsonrpc":"2.0"`

// The patterns of the usual shape. Each but a level's first starts with
// the ',' after the previous value; each ends with the colon, or with the
// value's first byte where the shape fixes it.
var (
	shapeHead       = newPattern(shapeJSONRPC + `,"id":`)
	shapeMethod     = newPattern(`,"method":"`)
	shapeParams     = newPattern(`,"params":{`)
	shapeName       = newPattern(`"name":"`)
	shapeArguments  = newPattern(`,"arguments":{`)
	shapeMeta       = newPattern(`,"_meta":{`)
	shapeMetaFirst  = newPattern(`"_meta":{`)
	shapeVersion    = newPattern(`"` + MetaProtocolVersion + `":"`)
	shapeClientInfo = newPattern(`,"` + MetaClientInfo + `":{`)
	shapeCaps       = newPattern(`,"` + MetaClientCapabilities + `":{`)
	shapeProgress   = newPattern(`,"` + MetaProgressToken + `":`)
)

// shapeHeadLen is shapeHead.n, as a constant.
const shapeHeadLen = len(shapeJSONRPC + `,"id":`)

// The lengths of the patterns the readers add to an index, as constants
// (an immediate, not a pattern's n loaded from memory; TestShapeWords).
const (
	shapeMethodLen   = len(`,"method":"`)
	shapeParamsLen   = len(`,"params":{`)
	shapeMetaLen     = len(`,"_meta":{`)
	shapeProgressLen = len(`,"` + MetaProgressToken + `":`)
)

// The words of shapeJSONRPC (at 0 and 8) and shapeHead's last (at 14),
// as constants (TestShapeWords): compared with an immediate, not a
// pattern's fields loaded from memory.
const (
	shapeV20w0 = uint64('{') | uint64('"')<<8 | uint64('j')<<16 | uint64('s')<<24 |
		uint64('o')<<32 | uint64('n')<<40 | uint64('r')<<48 | uint64('p')<<56
	shapeV20w1 = uint64('c') | uint64('"')<<8 | uint64(':')<<16 | uint64('"')<<24 |
		uint64('2')<<32 | uint64('.')<<40 | uint64('0')<<48 | uint64('"')<<56
	shapeHeadLast = uint64('0') | uint64('"')<<8 | uint64(',')<<16 | uint64('"')<<24 |
		uint64('i')<<32 | uint64('d')<<40 | uint64('"')<<48 | uint64(':')<<56
)

// version20 reports whether b starts with shapeJSONRPC, by its two
// constant words (the callers' first test, before top).
func version20(b []byte) bool {
	return len(b) >= len(shapeJSONRPC) && word(b, 0) == shapeV20w0 && word(b, 8) == shapeV20w1
}

// top reads the message object, which starts at b[0] as version20
// does, and returns the index just past its '}' as object does. e and
// kind are the id as PeekLine and PeekWith read it (e past it, or < 0;
// IDNone without shapeHead); they have tried the memo's template with
// it (replay): top does not.
func (p *parser) top(e int, kind IDKind) int {
	seen := uint32(1)<<keyFold | 1<<keyJSONRPC
	i := len(shapeJSONRPC)
	// b starts as version20 requires (the callers' test), and p.bad
	// holds sawVersion ("jsonrpc": "2.0"). The envelope is cleared here,
	// not by the callers: a hit of the memo's template (replay), which
	// the callers try first, writes every field itself.
	if kind != IDNone {
		i = shapeHeadLen // "id": a non-negative integer or a plain string
	}
	b, env := p.b, p.env
	*env = Envelope{}
	if kind != IDNone {
		if e < 0 {
			return p.members(i-5, levelTop, seen, keyID)
		}
		env.ID, env.IDKind = b[i:e], kind
		seen |= 1 << keyID
		i = e
	}
	// "method": a plain string.
	if !shapeMethod.short(b, i) {
		return p.after(i, levelTop, seen, keyMethod)
	}
	e = plainString(b, i+shapeMethodLen)
	if e < 0 {
		return p.members(i+1, levelTop, seen, keyMethod)
	}
	p.bad |= sawMethod
	env.Method = Str{Raw: b[i+shapeMethodLen : e-1], Present: true}
	seen |= 1 << keyMethod
	// "params": an object, read by params.
	if i = e; !shapeParams.short(b, i) || p.max <= levelTop {
		return p.after(i, levelTop, seen, keyParams)
	}
	o := i + shapeParamsLen - 1
	if paramsShape(b, o+1) {
		e = p.params(o + 1)
	} else {
		e = p.object(o+1, levelParams)
	}
	if e < 0 {
		return e
	}
	env.Params = b[o:e]
	seen |= 1 << keyParams
	if e < len(b) && b[e] == '}' {
		if m := p.memo; m != nil && p.tv != 0 && m.an == 0 {
			// A template to learn (none kept, none to skip).
			if m.skip == 0 {
				p.learn(e + 1)
			} else {
				m.skip--
			}
		}
		return e + 1
	}
	return p.after(e, levelTop, seen, keys[keyParams].after)
}

// oneDigit reports whether b[i:] starts with a number of one digit that
// plainNumber takes (it then returns i+1): PeekWith's test for the id,
// inline, before idWord and idValue (TestIDNumber).
func oneDigit(b []byte, i int) bool {
	return i+1 < len(b) && b[i]-'0' <= 9 && b[i+1]-'0' > 9 && b[i+1] != '.' && b[i+1]|0x20 != 'e'
}

// idWord reads, inline, an id of 1 to 6 digits without a leading zero
// (0 itself is left to idValue) that plainNumber takes, with i+8 <=
// len(b) (the caller's test): it returns plainNumber's answer, the index
// past the digits, else -1 (PeekLine and PeekWith then call idValue;
// TestIDNumber). A lane of a is 0 to 9 for a digit. Adding 0x76 sets
// the lane's top bit for 10 to 0x7f without a carry; a lane of 0x80 and
// up has it already (its carry moves up only, past the lowest flagged
// lane). The top lane's flag is set, so that the count of trailing zeros
// needs no test for 0 (8 digits or more read as 7: refused).
func idWord(b []byte, i int) int {
	w := word(b, i)
	a := w ^ lanes30
	j := bits.TrailingZeros64((a+lanes76|a)&lanes80|1<<63) >> 3
	if c := *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i+j)); uint(j-1) <= 5 && byte(w) != '0' && c != '.' && c|0x20 != 'e' {
		return i + j // c ends the digits
	}
	return -1
}

// idValue reads the id at b[i] where idWord does not (PeekLine and
// PeekWith, where shapeHead puts it; a string, 7 digits or more, 0, an
// id plainNumber refuses, or a short buffer): where a non-negative
// integer plainNumber takes ends and IDNumber, else, for a '"' at b[i],
// where a plain string ends (plainString's answer) and IDString, else
// ^i and IDNumber (TestIDNumber). Out of line: it would add both scans
// to its callers.
//
//go:noinline
func idValue(b []byte, i int) (int, IDKind) {
	// 8 to 14 digits by two words (idWord's lanes): the first all digits
	// without a leading zero, the second's first non-digit within its
	// lowest 7 lanes, ending the number (as plainNumber's test after its
	// digits). A clock's or a counter's id (the legacy fixture's
	// 100000001) takes this; anything else plainNumber decides.
	if i+16 <= len(b) && b[i] != '0' {
		if a := word(b, i) ^ lanes30; (a+lanes76|a)&lanes80 == 0 {
			a = word(b, i+8) ^ lanes30
			j := i + 8 + bits.TrailingZeros64((a+lanes76|a)&lanes80|1<<63)>>3
			if c := b[j]; c-'0' > 9 && c != '.' && c|0x20 != 'e' {
				return j, IDNumber
			}
		}
	}
	if e := plainNumber(b, i); e >= 0 || i >= len(b) || b[i] != '"' {
		return e, IDNumber
	}
	return plainString(b, i+1), IDString
}

// Lanes for idWord and idValue's two-word read.
const (
	lanes30 = 0x3030303030303030 // '0'
	lanes76 = 0x7676767676767676
)

// params reads the params object whose '{' is at b[i-1] and which starts
// as paramsShape accepts, as object does: name, arguments and _meta, or
// _meta first (as the Python and Go SDKs order a tools/call's params).
func (p *parser) params(i int) int {
	b, env := p.b, p.env
	seen := uint32(1) << keyFold
	metaFirst := false
	var e, o int
	if !shapeName.short(b, i) {
		// "_meta" first (paramsShape): then "name" and "arguments".
		o = i + shapeMetaFirst.n - 1
		if !shapeMetaFirst.short(b, i) || p.max <= levelParams {
			return p.members(i, levelParams, seen, keyMeta)
		}
		if e = p.metaValue(o); e < 0 {
			return e
		}
		env.Meta = b[o:e]
		seen |= 1 << keyMeta
		if e >= len(b) || b[e] != ',' || !shapeName.short(b, e+1) {
			return p.after(e, levelParams, seen, keyName)
		}
		i, metaFirst = e+1, true
	}
	// "name": a plain string.
	e = plainString(b, i+shapeName.n)
	if e < 0 {
		return p.members(i, levelParams, seen, keyName)
	}
	env.Name = Str{Raw: b[i+shapeName.n : e-1], Present: true}
	seen |= 1 << keyName
	// "arguments": an object, empty or flat (skipArgs records its members).
	if i = e; !shapeArguments.short(b, i) || p.max <= levelParams {
		return p.after(i, levelParams, seen, keyArguments)
	}
	o = i + shapeArguments.n - 1
	if o+1 < len(b) && b[o+1] == '}' {
		e = o + 2
		env.argN, env.argLen = 1, 2 // {}: recorded, no members
	} else if e = p.skipArgs(b, o); e < 0 {
		return p.members(i+1, levelParams, seen, keyArguments)
	} else {
		e += o
	}
	env.Arguments = b[o:e]
	env.argAt = addrOf(env.Arguments) // read only when argN != 0
	seen |= 1 << keyArguments
	if metaFirst {
		if e < len(b) && b[e] == '}' {
			return e + 1
		}
		return p.after(e, levelParams, seen, keys[keyArguments].after)
	}
	// "_meta": an object, read by meta.
	if i = e; !shapeMeta.short(b, i) || p.max <= levelParams {
		return p.after(i, levelParams, seen, keyMeta)
	}
	o = i + shapeMetaLen - 1
	if p.metaShape(o) {
		p.tm = o // read straight to here (learn)
		e = p.meta(o + 1)
	} else {
		e = p.object(o+1, levelMeta)
	}
	if e < 0 {
		return e
	}
	env.Meta = b[o:e]
	seen |= 1 << keyMeta
	if e < len(b) && b[e] == '}' {
		return e + 1
	}
	return p.after(e, levelParams, seen, keys[keyMeta].after)
}

// paramsShape reports whether the params object whose '{' is at b[i-1]
// starts as params expects: with "name" or "_meta", compact.
func paramsShape(b []byte, i int) bool {
	// shapeName is one word; params checks shapeMetaFirst's '{'.
	return i+8 <= len(b) && (word(b, i) == shapeName.w[0] || word(b, i) == shapeMetaFirst.w[0])
}

// metaValue reads the params._meta object whose '{' is at b[o]: by meta
// when it starts as meta expects (a memo only ever holds such a start),
// else by the object loop. The caller has checked the depth limit.
func (p *parser) metaValue(o int) int {
	if shapeVersion.lead(p.b, o+1) { // a memo holds only a _meta that starts so
		return p.meta(o + 1)
	}
	return p.object(o+1, levelMeta)
}

// metaShape reports whether metaValue would take the params._meta object
// whose '{' is at b[o] to meta: the test written out where it inlines.
func (p *parser) metaShape(o int) bool {
	return shapeVersion.lead(p.b, o+1)
}

// meta reads the params._meta object whose '{' is at b[i-1], as object
// does. With a memo (PeekConfig.Memo) whose bytes the message repeats
// there, the first three members are taken from it without reading them.
func (p *parser) meta(i int) int {
	b, env := p.b, p.env
	seen := uint32(1) << keyFold
	start, e, o := i, 0, 0
	if p.memo != nil {
		if e = p.recall(i); e >= 0 {
			seen |= 1<<keyProtocolVersion | 1<<keyClientInfo | 1<<keyClientCapabilities
			goto progress
		}
	}
	if !shapeVersion.at(b, i) {
		return p.object(i, levelMeta)
	}
	// protocolVersion: a plain string.
	e = plainString(b, i+shapeVersion.n)
	if e < 0 {
		return p.members(i, levelMeta, seen, keyProtocolVersion)
	}
	env.ProtocolVersion = Str{Raw: b[i+shapeVersion.n : e-1], Present: true}
	seen |= 1 << keyProtocolVersion
	// clientInfo: a flat object.
	if i = e; !shapeClientInfo.at(b, i) || p.max <= levelMeta {
		return p.after(i, levelMeta, seen, keyClientInfo)
	}
	o = i + shapeClientInfo.n - 1
	if e = p.skipFlat(b, o+1); e < 0 {
		return p.members(i+1, levelMeta, seen, keyClientInfo)
	}
	env.ClientInfo = b[o:e]
	seen |= 1 << keyClientInfo
	// clientCapabilities: an object, empty or flat.
	if i = e; !shapeCaps.at(b, i) || p.max <= levelMeta {
		return p.after(i, levelMeta, seen, keyClientCapabilities)
	}
	o = i + shapeCaps.n - 1
	if o+1 < len(b) && b[o+1] == '}' {
		e = o + 2
	} else if e = p.skipFlat(b, o+1); e < 0 {
		return p.members(i+1, levelMeta, seen, keyClientCapabilities)
	}
	env.ClientCapabilities = b[o:e]
	seen |= 1 << keyClientCapabilities
	if p.memo != nil {
		p.remember(b[start:e])
	}
progress:
	p.tv = e // read straight to here (learn)
	// progressToken: a non-negative integer or a plain string.
	if i = e; !shapeProgress.medium(b, i) {
		return p.after(i, levelMeta, seen, keyProgressToken)
	}
	v := i + shapeProgressLen
	if e = plainNumber(b, v); e < 0 {
		if v >= len(b) || b[v] != '"' {
			return p.members(i+1, levelMeta, seen, keyProgressToken)
		}
		if e = plainString(b, v+1); e < 0 {
			return p.members(i+1, levelMeta, seen, keyProgressToken)
		}
	}
	env.ProgressToken = b[v:e]
	seen |= 1 << keyProgressToken
	if e < len(b) && b[e] == '}' {
		return e + 1
	}
	return p.after(e, levelMeta, seen, keys[keyProgressToken].after)
}

// after goes on with the object loop after a member value that ends just
// before b[i]: the separator, then the loop from the next member's name,
// or the object's end. guess is the key the loop should try first.
//
//go:noinline
func (p *parser) after(i int, level int, seen uint32, guess uint8) int {
	b := p.b
	if p.generic == lineWalk {
		// The object's end, compact, or the object loop on the line
		// (sep takes whitespace).
		if uint(i) < uint(len(b)) && b[i] == '}' {
			return i + 1
		}
		if !p.cut(i) {
			return scanErrLine
		}
		b = p.b
	}
	c := byte(0)
	if i, c = sep(b, i); c == ',' {
		if i = skipWS(b, i); uint(i) >= uint(len(b)) || b[i] != '"' {
			return scanErrParse
		}
		return p.members(i, level, seen, guess)
	}
	if c == '}' {
		return i
	}
	return scanErrParse
}

// PeekMemo remembers the start of the last params._meta PeekWith read, so
// that the next message that repeats it byte for byte is not read there
// again. A client sends the same protocolVersion, clientInfo and
// clientCapabilities in every request of a connection: with a memo,
// PeekWith compares those bytes with the remembered ones (one memory
// compare) instead of reading three members, two of them long names and
// one an object. It also keeps a template of the last request read
// straight through (learn): the stretch from just past its id to its
// arguments ("method", "params" and its "name": the same in each call of
// one tool), and what follows the arguments up to the progressToken's
// value (_meta, as above). A request that repeats both around other
// arguments, id and token is taken with two memory compares (replay);
// one that does not is read in full, and replaces the template after a
// second miss in a row. What it records is the same either way
// (FuzzPeekShape, FuzzPeekTemplate).
//
// A PeekMemo may serve any sequence of PeekWith calls (one connection's,
// or whoever takes it from a pool: the line transports take one per read,
// HTTP one per request), since what it holds is compared byte for byte
// before it is used; but each call writes it, so calls that may run at
// the same time must not share one. Its zero value is empty; it keeps no
// reference to any message.
type PeekMemo struct {
	n  int       // len of the remembered bytes, b[metaAt:metaAt+n]; 0: none
	at [5]uint16 // offsets there of protocolVersion's body, then of clientInfo's span, then where clientCapabilities starts
	// b holds no '\n' (PeekLine takes it without reading): the bytes
	// remembered at metaAt, and, once learn kept a template, `,"_meta":{`
	// before them and `,"progressToken":` after them when tok, so that
	// replay compares what follows a request's arguments at once.
	b [memoSize]byte

	// The template (learn, replay): the stretch of the last message
	// read straight through that every request of a client repeats from
	// just past the id to the '{' of the arguments, t[:an] (0: none),
	// and what followed the arguments: b's stretch (`,"_meta":{`, the
	// _meta's start remembered, `,"progressToken":` when tok), then the
	// progressToken's value when tok, then "}}}".
	an  uint8
	tok bool
	// How a template is kept (miss): a first miss keeps it (strike), a
	// second in a row forgets it; one forgotten without a hit (hit: one
	// since it was learned) makes learn pass over the next wait
	// messages it could learn from (skip), wait doubling each time, so
	// that a client whose requests seldom repeat does not pay for
	// learning each.
	strike, hit bool
	wait, skip  uint8
	// Where the method's body ends, where the name's body starts and
	// ends, and where the params '{' is, in t.
	tat [4]uint8
	t   [templateSize]byte
	// gen is the template's generation (learn; Envelope.Template): a
	// hit records it in the envelope.
	gen uint64
}

// templateGen gives each template learn keeps its generation
// (Envelope.Template): unique in the process, never 0.
var templateGen atomic.Uint64

// templateSize bounds the first stretch of a template (the fixture's is
// 60 bytes; a method and a tool name of 100 bytes together fit).
const templateSize = 160

// memoSize bounds the start of a params._meta a PeekMemo keeps, with
// what a template puts around it (the fixture's is 180 bytes,
// EXAMPLES.md's 190).
const memoSize = 512

// metaAt is where a PeekMemo keeps the start of a params._meta, after
// `,"_meta":{` (shapeMeta).
const metaAt = len(`,"_meta":{`)

// recall is meta's use of the memo at b[i], just past the '{' of
// params._meta: when the message repeats the remembered bytes there, it
// records their members as meta would and returns the index past them;
// otherwise -1.
func (p *parser) recall(i int) int {
	b, env, m := p.b, p.env, p.memo
	n := m.n
	if n == 0 || p.max <= levelMeta || i+n > len(b) || string(b[i:i+n]) != string(m.b[metaAt:metaAt+n]) {
		return -1
	}
	env.ProtocolVersion = Str{Raw: b[i+int(m.at[0]) : i+int(m.at[1])], Present: true}
	env.ClientInfo = b[i+int(m.at[2]) : i+int(m.at[3])]
	env.ClientCapabilities = b[i+int(m.at[4]) : i+n]
	return i + n
}

// remember keeps meta, the start of a params._meta just read by meta (from
// just past its '{' to the end of its clientCapabilities), with the spans
// meta recorded in it.
//
//go:noinline
func (p *parser) remember(meta []byte) {
	m, env := p.memo, p.env
	m.an = 0 // the template's second stretch changes
	if len(meta) > len(m.b)-metaAt-shapeProgress.n || bytes.IndexByte(meta, '\n') >= 0 {
		// Too long, or a '\n' (as whitespace inside clientInfo or
		// clientCapabilities) that PeekLine must not take unread.
		m.n = 0
		return
	}
	base := addrOf(meta)
	m.at[0] = uint16(addrOf(env.ProtocolVersion.Raw) - base)
	m.at[1] = m.at[0] + uint16(len(env.ProtocolVersion.Raw))
	m.at[2] = uint16(addrOf(env.ClientInfo) - base)
	m.at[3] = m.at[2] + uint16(len(env.ClientInfo))
	m.at[4] = uint16(addrOf(env.ClientCapabilities) - base)
	m.n = copy(m.b[metaAt:], meta)
}

// replay is PeekLine's and PeekWith's use of the memo's template at
// b[s], just past an id they read where shapeHead puts it, before top:
// when the message goes on with its stretch, arguments skipArgs reads,
// `,"_meta":{` and the _meta's start the memo holds (recall's), a
// progressToken's value as meta reads it when the template has one, and
// "}}}", it records all of it as the readers would and returns the index
// past the message's '}'. The envelope was not cleared: a hit writes
// every field, id and kind (the id's, b[shapeHeadLen:s]) included, and
// zeroes those a template never sets (TestReplayWritesEveryField).
// Otherwise -1, the envelope holding anything (top, which the callers
// call then, clears it), and the memo counts a miss (miss).
//
// A hit is exact: learn keeps only a stretch the readers read straight
// through, as the memo's _meta start is (remember), whose reading
// depends on its own bytes alone (each string the readers scan ends
// inside it, 7 bytes or more before its end; each name is one the level
// expects once, none folds to another), and replay checks the depth
// limit those reads need. Neither holds a '\n' (PeekLine takes them
// unread).
func (p *parser) replay(s int, kind IDKind) int {
	b, env, m := p.b, p.env, p.memo
	an := int(m.an)
	// The first stretch, m.t[:an]: learn keeps an only when 8 <= an <=
	// len(m.t) (ordered), and s+an <= len(b) is tested here.
	if p.max <= levelMeta || s+an > len(b) || !sameWords(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), s), unsafe.Pointer(&m.t), an) {
		m.miss()
		return -1
	}
	o := s + an - 1 // the arguments' '{'
	// The fields that depend on the template and the id alone are
	// written before the arguments are read, so that fewer values live
	// across skipArgs's call. A miss below leaves them written: top
	// clears the envelope then. Their spans lie in b[:s+an], which
	// sameWords read, by the memo's offsets (ordered: see below).
	at := &m.tat
	base, c := unsafe.Pointer(unsafe.SliceData(b)), cap(b)
	// Kind is finish's answer for a hit (plainRequest holds: p.bad is
	// sawVersion|sawMethod, kind IDNumber or IDString); the callers
	// then skip that test (TestReplayKind).
	env.Kind, env.IDKind, env.NonStringVersion, env.HasResult, env.HasError = KindRequest, kind, false, false, false
	env.ID = span(base, c, shapeHeadLen, s)
	env.URI, env.RequestID, env.LogLevel = Str{}, nil, Str{}
	env.Method = Str{Raw: span(base, c, s+shapeMethodLen, s+int(at[0])), Present: true}
	env.Name = Str{Raw: span(base, c, s+int(at[1]), s+int(at[2])), Present: true}
	env.tmpl = m.gen
	// The stretch holds the method, a plain string: top's straight path
	// would say the same after a miss below.
	p.bad |= sawMethod
	// What skipArgs records, cleared first: it writes the members it
	// reads, and argN and argLen only when it keeps them (argAt is
	// written below).
	env.argN, env.argLen = 0, 0
	env.args[0], env.args[1], env.args[2], env.args[3] = 0, 0, 0, 0 // stores, not a copy (argsCleared)
	e := o + 2
	if uint(o+1) < uint(len(b)) && b[o+1] == '}' {
		env.argN, env.argLen = 1, 2 // {}: recorded, no members
	} else if e = p.skipArgs(b, o); e < 0 {
		m.miss()
		return -1
	} else {
		e += o
	}
	i := e + metaAt // just past the _meta's '{'
	n := m.n
	bn := metaAt + n
	if m.tok {
		bn += shapeProgressLen
	}
	v := e + bn
	if v > len(b) || string(b[e:v]) != string(m.b[:bn]) {
		m.miss()
		return -1
	}
	t := v
	if m.tok {
		// The token: a non-negative integer as plainNumber takes it, or a
		// plain string. The digits are read here, and the "}}}" test below
		// refuses what plainNumber refuses after them (a fraction, an
		// exponent): only a leading zero is tested (TestReplayToken).
		for uint(t) < uint(len(b)) && b[t]-'0' <= 9 {
			t++
		}
		if t == v {
			if v >= len(b) || b[v] != '"' {
				m.miss()
				return -1
			}
			if t = plainString(b, v+1); t < 0 {
				m.miss()
				return -1
			}
		} else if t-v > 1 && b[v] == '0' {
			m.miss()
			return -1
		}
	}
	if t+3 > len(b) || half(b, t) != '}'|'}'<<8 || half(b, t+1) != '}'|'}'<<8 { // "}}}"
		m.miss()
		return -1
	}
	m.strike, m.hit = false, true
	// The spans, built without bounds checks (span): every bound below
	// lies in b[s:t+3], which the compares above read (s+an and t+3 <=
	// len(b)), by the memo's offsets, which learn and remember took from
	// a message's spans: shapeMethod.n <= tat[0] < tat[3] < tat[1] <=
	// tat[2] < an, at[0] <= at[1] <= at[2] <= at[3] <= at[4] <= n (memoOK
	// in the fuzz targets), and i+n <= v <= t. Each span starts before
	// t+3, inside b.
	env.Params = span(base, c, s+int(at[3]), t+2)
	env.Arguments = span(base, c, o, e)
	env.argAt = uintptr(base) + uintptr(o) // as params: read only when argN != 0
	env.Meta = span(base, c, i-1, t+1)
	env.ProtocolVersion = Str{Raw: span(base, c, i+int(m.at[0]), i+int(m.at[1])), Present: true}
	env.ClientInfo = span(base, c, i+int(m.at[2]), i+int(m.at[3]))
	env.ClientCapabilities = span(base, c, i+int(m.at[4]), i+n)
	if m.tok {
		env.ProgressToken = span(base, c, v, t)
	} else {
		env.ProgressToken = nil
	}
	return t + 3
}

// argsCleared fails to build unless replay's clear of env.args covers
// every one of its maxArgMembers entries.
var _ = [1]struct{}{}[maxArgMembers-4]

// span is b[lo:hi] for replay, base and c being b's start and cap,
// without the checks of a slice expression: the caller ensures 0 <= lo
// <= hi <= len(b) and lo < len(b), so that the span's pointer is inside
// b (a slice expression's mask for a span at cap is not needed).
func span(base unsafe.Pointer, c, lo, hi int) (b []byte) {
	*(*sliceHeader)(unsafe.Pointer(&b)) = sliceHeader{unsafe.Add(base, lo), hi - lo, c - lo}
	return b
}

// sliceHeader is a []byte's layout (span).
type sliceHeader struct {
	p    unsafe.Pointer
	n, c int
}

// learn is top's, with a memo that has no template and none to skip
// (miss), at the end of a message read straight through to end, just
// past its '}'. When the message was read from its start with an id (so
// from s, just past the id), params read its members straight to the '{'
// of _meta (p.tm) and meta its own to the end of clientCapabilities
// (p.tv), which the memo holds (remember, recall: so no '\n'), and the
// message ends there, or with a progressToken meta reads, then "}}}",
// the memo keeps the stretch from s to the arguments as the template
// replay uses. Otherwise the memo has none. (What it checks past the
// _meta is what replay checks again: a template learned without it
// would only miss.)
//
//go:noinline
func (p *parser) learn(end int) {
	b, env, m := p.b, p.env, p.memo
	// top read an id only where shapeHead ends (a message without one
	// at its start leaves top's straight path to the object loop).
	s := shapeHead.n + len(env.ID)
	tm, tv := p.tm, p.tv
	if len(env.ID) == 0 || tm <= s || m.n == 0 || tv != tm+1+m.n || p.max <= levelMeta {
		return
	}
	base := int(addrOf(b))
	o := int(addrOf(env.Arguments)) - base // the arguments' '{'
	t := tv
	tok := shapeProgress.medium(b, tv)
	if tok {
		v := tv + shapeProgress.n
		if t = plainNumber(b, v); t < 0 {
			if v >= len(b) || b[v] != '"' {
				return
			}
			if t = plainString(b, v+1); t < 0 {
				return
			}
		}
	}
	an := o + 1 - s
	if t+3 != end || b[t] != '}' || b[t+1] != '}' || an < 8 || an > len(m.t) { // an < 8: never (sameWords needs 8)
		return
	}
	name := int(addrOf(env.Name.Raw)) - base - s
	m.tat = [4]uint8{
		uint8(int(addrOf(env.Method.Raw)) - base - s + len(env.Method.Raw)),
		uint8(name), uint8(name + len(env.Name.Raw)),
		uint8(int(addrOf(env.Params)) - base - s),
	}
	if !m.ordered(an) {
		// replay's spans are built without bounds checks on the order
		// of these offsets: a template that would break it is not kept.
		m.an = 0
		return
	}
	copy(m.t[:], b[s:o+1])
	copy(m.b[:], shapeMeta.s)
	if tok {
		copy(m.b[metaAt+m.n:], shapeProgress.s)
	}
	m.an, m.tok = uint8(an), tok
	m.strike, m.hit = false, false
	m.gen = templateGen.Add(1)
}

// ordered reports whether the memo's offsets, with a template of an
// bytes whose offsets are in tat, keep the order replay's unchecked
// spans rely on: in the remembered _meta, protocolVersion's body, then
// clientInfo, then clientCapabilities, all within its n bytes, which fit
// in b with `,"progressToken":` after them; in the template, the method's
// end, then the params' '{', then the name's body, all before the
// arguments' '{' at an-1. learn calls it once per template kept, so a
// bug in learn or remember costs the template, never a read out of
// bounds.
func (m *PeekMemo) ordered(an int) bool {
	a, t := m.at, m.tat
	return m.n > 0 && a[0] <= a[1] && a[1] <= a[2] && a[2] <= a[3] && a[3] <= a[4] && int(a[4]) <= m.n &&
		metaAt+m.n+shapeProgress.n <= len(m.b) &&
		int(t[0]) >= shapeMethod.n && t[0] < t[3] && t[3] < t[1] && t[1] <= t[2] && int(t[2]) < an && an <= len(m.t)
}

// miss is replay's when the message does not follow the template: the
// first keeps it, the second in a row forgets it (and, when it never
// hit, makes learn wait).
//
//go:noinline
func (m *PeekMemo) miss() {
	if !m.strike {
		m.strike = true
		return
	}
	m.an, m.strike = 0, false
	if m.hit {
		m.wait = 0
	} else {
		m.wait = min(2*m.wait+1, 63)
	}
	m.skip = m.wait
}

// sameWords reports whether the n bytes at p are those at q, a word at
// a time (for the template's first stretch, shorter than memequal's
// set-up pays for). The caller ensures 8 <= n and that both hold n
// bytes. The words' differences are or-ed together and tested once: a
// message that leaves the template reads the whole stretch (a miss, which
// is rare), one that keeps to it pays no branch per word.
func sameWords(p, q unsafe.Pointer, n int) bool {
	n -= 8
	d := wordAt(p, n) ^ wordAt(q, n)
	for j := 0; j < n; j += 8 {
		d |= wordAt(p, j) ^ wordAt(q, j)
	}
	return d == 0
}

// wordAt is word for the bytes at p+j.
func wordAt(p unsafe.Pointer, j int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, j))[:])
}
