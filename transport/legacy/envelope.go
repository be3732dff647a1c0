package legacy

import (
	"bytes"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// The engine's message of a fast request is the client's body with the
// session's _meta members spliced in (modernFast). codec.Peek read the
// body already, and the members are the session's, read once per record
// version; so the envelope of the message is derived from the body's
// (deriveEnvelope: its spans moved by the splice, the session's members
// placed; slices of the message as PeekWith makes them, [i:j]) instead of peeking the whole message again. FuzzDeriveEnvelope
// holds the derived envelope to PeekWith's of the message, span by span.

// metaBlock is a session's _meta members for one record version,
// encoded without braces (metaHead), with where PeekWith finds the four
// of them (metaKeys) when they stand in a request's params._meta.
type metaBlock struct {
	b      []byte
	pv, ll strSpan // ProtocolVersion, LogLevel
	caps   span    // ClientCapabilities
	info   span    // ClientInfo
	peeked bool    // the block peeked clean: derivation may use it
}

// span is an offset and a length in a metaBlock's b; n < 0: none.
type span struct{ off, n int }

// strSpan is a codec.Str with its Raw as a span.
type strSpan struct {
	span
	escaped, present bool
}

// metaProbe is the message a metaBlock is peeked in: a request whose
// params._meta holds the block and nothing else, so its members stand
// at the depth they have in the engine's message.
const metaProbe = `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"_meta":{`

func newMetaBlock(b []byte, maxDepth int) *metaBlock {
	mb := &metaBlock{b: b, caps: span{n: -1}, info: span{n: -1}}
	msg := make([]byte, 0, len(metaProbe)+len(b)+3)
	msg = append(append(append(msg, metaProbe...), b...), "}}}"...)
	var env codec.Envelope
	if codec.PeekWith(msg, &env, codec.PeekConfig{MaxDepth: maxDepth}) != nil || env.Kind != codec.KindRequest || env.NonStringVersion ||
		env.ProgressToken != nil || env.Name.Present || env.URI.Present || env.Arguments != nil || env.RequestID != nil {
		return mb
	}
	at := func(p []byte) span {
		if p == nil {
			return span{n: -1}
		}
		return span{off: offsetIn(msg, p) - len(metaProbe), n: len(p)}
	}
	str := func(s codec.Str) strSpan { return strSpan{at(s.Raw), s.Escaped, s.Present} }
	mb.pv, mb.ll = str(env.ProtocolVersion), str(env.LogLevel)
	mb.caps, mb.info = at(env.ClientCapabilities), at(env.ClientInfo)
	mb.peeked = true
	return mb
}

// offsetIn is where p (a subslice of b) begins in b, or -1.
func offsetIn(b, p []byte) int {
	if p == nil || b == nil {
		return -1
	}
	d := int(uintptr(unsafe.Pointer(unsafe.SliceData(p))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	if d < 0 || d+len(p) > len(b) {
		return -1
	}
	return d
}

// splice is where modernFast put the parts of the engine's message: the
// id at idOff, the method's name (inside its quotes) at methodOff, the
// params object at pOff, the session's members at headOff, a _meta
// object it wrote at metaOff (metaN bytes; metaOff -1: the client's
// _meta, moved). p is the client's params (nil: none); its bytes from
// offset at on are n bytes further on in the message than its first.
type splice struct {
	ok                              bool
	head                            *metaBlock
	p                               []byte
	idOff, methodOff, pOff, headOff int
	metaOff, metaN                  int
	at, n                           int
}

// set records lay in sp (when sp is not nil); it returns true, for
// modernFast's return.
func (sp *splice) set(lay *splice, head *metaBlock, p []byte) bool {
	if sp != nil {
		*sp = *lay
		sp.head, sp.p, sp.ok = head, p, head.peeked
	}
	return true
}

// deriveEnvelope fills dst with the envelope PeekWith would give msg,
// the message modernFast built (as sp says) from a body whose envelope
// is src. False when it cannot be sure (dst is then to be peeked): the
// splice was not the common case, or the client's _meta holds an escape
// (a key escaped into one of the session's would be a duplicate).
func deriveEnvelope(dst, src *codec.Envelope, msg []byte, sp *splice) bool {
	if !sp.ok || src.Kind != codec.KindRequest || src.ProtocolVersion.Present || src.NonStringVersion ||
		src.ClientCapabilities != nil || src.ClientInfo != nil || src.LogLevel.Present ||
		src.Meta != nil && bytes.IndexByte(src.Meta, '\\') >= 0 {
		return false
	}
	mv := mover{p: sp.p, msg: msg, pOff: sp.pOff, at: sp.at, n: sp.n}
	hd := sp.head
	// Field by field into a zeroed dst: a composite literal read through
	// the movers was built aside and copied (the envelope is ~60 words).
	// dst must not be src (zeroing it first would lose what is read).
	*dst = codec.Envelope{}
	dst.Kind = src.Kind
	dst.ID = msg[sp.idOff : sp.idOff+len(src.ID)]
	dst.IDKind = src.IDKind
	dst.Method = codec.Str{Raw: msg[sp.methodOff : sp.methodOff+len(src.Method.Raw)], Present: true}
	dst.Params = msg[sp.pOff : len(msg)-1]
	dst.Name = mv.str(src.Name)
	dst.URI = mv.str(src.URI)
	dst.Arguments = mv.span(src.Arguments)
	dst.RequestID = mv.span(src.RequestID)
	dst.ProtocolVersion = headStr(msg, sp.headOff, hd.pv)
	dst.ClientCapabilities = headSpan(msg, sp.headOff, hd.caps)
	dst.ProgressToken = mv.span(src.ProgressToken)
	dst.LogLevel = headStr(msg, sp.headOff, hd.ll)
	dst.ClientInfo = headSpan(msg, sp.headOff, hd.info)
	// The rebuilt message is jsonrpc, id, method and params only:
	// HasResult and HasError stay false.
	if sp.metaOff >= 0 {
		dst.Meta = msg[sp.metaOff : sp.metaOff+sp.metaN]
	} else {
		dst.Meta = mv.span(src.Meta)
	}
	// The arguments' members the body's peek recorded hold for the moved
	// span too (their offsets are relative to it): the engine's flat check
	// reads them instead of scanning the arguments again.
	dst.KeepArguments(src)
	return !mv.bad
}

// mover moves spans of the client's params (p) to where they are in the
// message (msg, params at pOff; p's bytes from at on n further on). bad
// is set when a span is not in p.
type mover struct {
	p, msg      []byte
	pOff, at, n int
	bad         bool
}

func (m *mover) span(x []byte) []byte {
	if x == nil {
		return nil
	}
	s := offsetIn(m.p, x)
	if s < 0 {
		m.bad = true
		return nil
	}
	e := s + len(x)
	switch {
	case s >= m.at:
		s, e = s+m.n, e+m.n
	case e > m.at:
		e += m.n // holds the splice
	}
	return m.msg[m.pOff+s : m.pOff+e]
}

func (m *mover) str(x codec.Str) codec.Str {
	x.Raw = m.span(x.Raw)
	return x
}

// headSpan is x, a span of the session's block, in msg (the block at off).
func headSpan(msg []byte, off int, x span) []byte {
	if x.n < 0 {
		return nil
	}
	o := off + x.off
	return msg[o : o+x.n]
}

func headStr(msg []byte, off int, x strSpan) codec.Str {
	return codec.Str{Raw: headSpan(msg, off, x.span), Escaped: x.escaped, Present: x.present}
}
