package streamhttp

import (
	"bytes"
	"encoding/binary"
	"math/big"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// maxParamHeaders bounds the Mcp-Param-* headers looked at per request;
// more than that is answered -32020 (the headers cap bounds them anyway).
const maxParamHeaders = 32

// maxFlatBindings bounds the bindings checked in one pass over the
// arguments; tools with more use one lookup per binding.
const maxFlatBindings = 16

type hval struct {
	v []byte
	n int // occurrences
}

func (h *hval) add(v []byte) {
	if h.n == 0 {
		h.v = v
	}
	h.n++
}

type kv struct{ k, v []byte }

// mirrored holds the request's mirrored MCP headers, collected in one pass
// over the header block (HDR-*, PARAM-*). Slices alias the request.
type mirrored struct {
	version, method, name hval
	params                [maxParamHeaders]kv
	nParams               int
	tooMany               bool
}

// reset empties m without zeroing its whole array (only what was used).
func (m *mirrored) reset() {
	clear(m.params[:m.nParams])
	m.version, m.method, m.name = hval{}, hval{}, hval{}
	m.nParams, m.tooMany = 0, false
}

// add files one header line; names compare case-insensitively (HDR-06) and
// optional whitespace around the value is dropped (HDR-07).
func (m *mirrored) add(k, v []byte) {
	if len(k) < 8 || (k[0]|0x20) != 'm' || (k[1]|0x20) != 'c' || (k[2]|0x20) != 'p' || k[3] != '-' {
		return
	}
	v = trimOWS(v)
	// Both front ends hand over canonical names ("Mcp-Method"): one exact
	// compare each, the case-insensitive ones only for other spellings.
	switch string(k) {
	case "Mcp-Protocol-Version":
		m.version.add(v)
		return
	case "Mcp-Method":
		m.method.add(v)
		return
	case "Mcp-Name":
		m.name.add(v)
		return
	}
	switch {
	case equalFold(k, "mcp-protocol-version"):
		m.version.add(v)
	case equalFold(k, "mcp-method"):
		m.method.add(v)
	case equalFold(k, "mcp-name"):
		m.name.add(v)
	case len(k) > len("mcp-param-") && equalFold(k[:len("mcp-param-")], "mcp-param-"):
		if m.nParams == maxParamHeaders {
			m.tooMany = true
			return
		}
		m.params[m.nParams] = kv{k, v}
		m.nParams++
	}
}

func trimOWS(v []byte) []byte {
	if len(v) > 0 && v[0] > ' ' && v[len(v)-1] > ' ' {
		return v // the usual value: nothing to trim (a space and a tab are both at most ' ')
	}
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// equalFold compares b with the lowercase ASCII string s, ignoring ASCII
// case in b.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// foldEqual compares b and s ignoring ASCII case on both sides.
func foldEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func mismatch(msg string) *codec.Error {
	return codec.NewError(codec.CodeHeaderMismatch, "Header mismatch: "+msg)
}

var (
	errNoVersionHeader = mismatch("missing required MCP-Protocol-Version header")
	errDupVersion      = mismatch("MCP-Protocol-Version" + dupSuffix)
	errNoMethodHeader  = mismatch("missing required Mcp-Method header")
	errDupMethod       = mismatch("Mcp-Method" + dupSuffix)
	errNoNameHeader    = mismatch("missing required Mcp-Name header")
	errDupName         = mismatch("Mcp-Name" + dupSuffix)
	errTooManyParams   = mismatch("too many Mcp-Param-* headers")
	errBadEncoding     = mismatch("malformed =?base64?...?= header value")
	errIllegalChars    = mismatch("header value contains characters not allowed in a header")
)

// dupSuffix ends the message of a mirrored header sent twice (counted in
// Stats.DuplicateHeaders, duplicates.go).
const dupSuffix = " header sent more than once"

func once(h *hval, missing, dup *codec.Error) *codec.Error {
	switch {
	case h.n == 0:
		return missing
	case h.n > 1:
		return dup
	}
	return nil
}

// checkVersionHeader: present (step 7 of HVAL-02).
func (m *mirrored) checkVersionPresent() *codec.Error {
	return once(&m.version, errNoVersionHeader, errDupVersion)
}

// checkVersionEqual: header == body version (step 9; HDR-01).
func (m *mirrored) checkVersionEqual(env *codec.Envelope) *codec.Error {
	if strEqual(&env.ProtocolVersion, m.version.v) {
		return nil
	}
	return m.versionMismatch(env)
}

func (m *mirrored) versionMismatch(env *codec.Envelope) *codec.Error {
	return mismatch("MCP-Protocol-Version header value '" + string(m.version.v) + "' does not match body value '" + env.ProtocolVersion.String() + "'")
}

// checkMethod: Mcp-Method present and equal, case-sensitively (step 11; HDR-03, HDR-06).
func (m *mirrored) checkMethod(env *codec.Envelope) *codec.Error {
	if m.method.n == 1 && strEqual(&env.Method, m.method.v) {
		return nil
	}
	return m.methodMismatch(env)
}

// methodMismatch is checkMethod's answer to anything but one equal value.
func (m *mirrored) methodMismatch(env *codec.Envelope) *codec.Error {
	if e := once(&m.method, errNoMethodHeader, errDupMethod); e != nil {
		return e
	}
	if strEqual(&env.Method, m.method.v) {
		return nil
	}
	return mismatch("Mcp-Method header value '" + string(m.method.v) + "' does not match body value '" + env.Method.String() + "'")
}

// checkName: Mcp-Name for tools/call, prompts/get (params.name) and
// resources/read (params.uri), decoded when in the base64 form (step 13;
// HDR-04, HDR-05, B64-05). scratch is reused decoding space.
func (m *mirrored) checkName(env *codec.Envelope, method string, scratch *[]byte) *codec.Error {
	var body *codec.Str
	switch method {
	case "tools/call", "prompts/get":
		body = &env.Name
	case "resources/read":
		body = &env.URI
	default:
		return nil
	}
	// What clients send: the name once, as a literal, equal to the body's
	// unescaped string byte for byte. decodeHeader returns such a value
	// as is (plainEqual), so it is compared once, here; anything else
	// takes the full path below, which answers it as before.
	if m.name.n == 1 && body.Present && !body.Escaped {
		// A name of 4 to 8 bytes (a tool's usual one) is plainEqual's
		// answer read as one word (its two halves overlap below 8):
		// compared, and tested for a refused byte, without a loop.
		if v, raw := m.name.v, body.Raw; uint(len(v)-4) <= 4 && len(v) == len(raw) {
			n := len(v)
			a := uint64(binary.LittleEndian.Uint32(v)) | uint64(binary.LittleEndian.Uint32(v[n-4:]))<<32
			if a == uint64(binary.LittleEndian.Uint32(raw))|uint64(binary.LittleEndian.Uint32(raw[n-4:]))<<32 && plainWord(a) {
				return nil
			}
		} else if plainEqual(v, raw) {
			return nil
		}
	}
	return m.checkNameFull(body, scratch)
}

// checkNameFull is checkName's every step, for body (params.name or
// params.uri).
func (m *mirrored) checkNameFull(body *codec.Str, scratch *[]byte) *codec.Error {
	if e := once(&m.name, errNoNameHeader, errDupName); e != nil {
		return e
	}
	v, e := decodeHeader(m.name.v, scratch)
	if e != nil {
		return e
	}
	if body.Present && body.Equal(v) {
		return nil
	}
	return mismatch("Mcp-Name header value '" + string(m.name.v) + "' does not match body value '" + body.String() + "'")
}

// strEqual is s.Equal(v) with the usual case, a string without escapes,
// compared where it is called (Equal takes its Str by value and is not
// inlined).
func strEqual(s *codec.Str, v []byte) bool {
	if s.Escaped {
		return s.Equal(v)
	}
	return s.Present && string(s.Raw) == string(v)
}

// plainEqual reports whether the header value v equals raw byte for byte
// and is a value decodeHeader returns unchanged: no byte it refuses
// (below 0x20, 0x7f; a tab is left to decodeHeader too) and not of the
// base64 sentinel's shape (any value of 11 bytes or more that starts with
// '=' is left to it). false says nothing: the caller then decodes.
func plainEqual(v, raw []byte) bool {
	if len(v) != len(raw) || (len(v) >= 11 && v[0] == '=') {
		return false
	}
	raw = raw[:len(v)]
	for i, c := range v {
		if c != raw[i] || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// plainWord reports whether none of w's 8 bytes is one plainEqual
// refuses (below 0x20, or 0x7f). A byte below 0x20 leaves its top bit set
// in w-0x20…20 and clear in w; a 0x7f byte is a zero byte of w^0x7f…7f.
// Either test flags some byte exactly when such a byte exists (a borrow
// reaches only bytes above the first one that is), which is all the
// answer needs.
func plainWord(w uint64) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	del := w ^ ones*0x7f
	return ((w-ones*0x20)&^w|(del-ones)&^del)&tops == 0
}

func decodeHeader(v []byte, scratch *[]byte) ([]byte, *codec.Error) {
	for _, c := range v {
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return nil, errIllegalChars // PARAM-09
		}
	}
	out, err := codec.DecodeHeaderValue((*scratch)[:0], v)
	if err != nil {
		return nil, errBadEncoding // B64-06
	}
	if len(out) > 0 && cap(out) > cap(*scratch) {
		*scratch = out[:0]
	}
	return out, nil
}

// checkParams validates every x-mcp-header binding of the tool against
// params.arguments (step 14; PARAM-05..09, PARAM-14). Unknown Mcp-Param-*
// headers are ignored.
func (m *mirrored) checkParams(env *codec.Envelope, t *engine.Tool, scratch *[]byte, vals *[maxFlatBindings][]byte) *codec.Error {
	if !m.tooMany && len(t.HeaderBindings()) == 0 {
		return nil // nothing to mirror; Mcp-Param-* headers are ignored
	}
	return m.checkBindingsOf(env, t, scratch, vals)
}

// checkBindingsOf is checkParams for a tool with bindings, or with too
// many Mcp-Param-* headers sent (checkParams' usual case, inlined, being
// neither).
func (m *mirrored) checkBindingsOf(env *codec.Envelope, t *engine.Tool, scratch *[]byte, vals *[maxFlatBindings][]byte) *codec.Error {
	if m.tooMany {
		return errTooManyParams
	}
	names, flat := t.HeaderBindingNames()
	flat = flat && len(names) <= maxFlatBindings
	if !flat || len(names) == 0 {
		return m.checkBindings(env, t, false, scratch, nil)
	}
	// One pass over the arguments for every binding; a member repeated
	// would let an intermediary read one value and us another (parser
	// differential), so it is refused.
	used := vals[:len(names)]
	var e *codec.Error
	if err := codec.LookupMembers(env.Arguments, names, used); err != nil {
		e = mismatch("an argument mirrored in a header appears more than once or is malformed")
	} else {
		e = m.checkBindings(env, t, true, scratch, used)
	}
	// The values alias the request: dropped here, so that the pooled
	// work space keeps no reference and need not clear them all.
	clear(used)
	return e
}

// checkBindings is checkParams' comparison of each binding with its
// header; flat: vals holds each binding's argument (LookupMembers).
func (m *mirrored) checkBindings(env *codec.Envelope, t *engine.Tool, flat bool, scratch *[]byte, vals [][]byte) *codec.Error {
	bindings := t.HeaderBindings()
	for i := range bindings {
		b := &bindings[i]
		var hv []byte
		n := 0
		for j := 0; j < m.nParams; j++ {
			// add kept only names starting with "mcp-param-" (any case):
			// compare what follows with the annotation value.
			if foldEqual(m.params[j].k[len("mcp-param-"):], b.Name) {
				if n == 0 {
					hv = m.params[j].v
				}
				n++
			}
		}
		if n > 1 {
			return mismatch(b.Header + dupSuffix)
		}
		var raw []byte
		var ok bool
		if flat {
			raw = vals[i]
			ok = raw != nil
		} else {
			// Strict: a member repeated on the path would let an
			// intermediary read one value and us another.
			var err error
			raw, ok, err = codec.LookupPathStrict(env.Arguments, b.Path...)
			if err != nil {
				return mismatch(b.Header + ": the argument appears more than once in the body")
			}
		}
		absent := !ok || string(raw) == "null"
		switch {
		case absent && n == 0:
			continue // PARAM-05: nothing to mirror
		case absent:
			return mismatch(b.Header + " header sent but the argument is absent")
		case n == 0:
			return mismatch("missing required " + b.Header + " header")
		}
		v, e := decodeHeader(hv, scratch)
		if e != nil {
			return e
		}
		if !valueMatches(raw, v) {
			return mismatch(b.Header + " header value '" + string(hv) + "' does not match body value " + string(raw))
		}
	}
	return nil
}

// valueMatches compares a JSON argument value with its header form
// (PARAM-06): strings as is, numbers numerically (PARAM-08: 42.0 equals
// 42), booleans as true/false.
func valueMatches(raw, h []byte) bool {
	switch raw[0] {
	case '"':
		in := raw[1 : len(raw)-1]
		s := codec.Str{Raw: in, Escaped: bytes.IndexByte(in, '\\') >= 0, Present: true}
		return s.Equal(h)
	case 't':
		return string(h) == "true" && string(raw) == "true"
	case 'f':
		return string(h) == "false" && string(raw) == "false"
	case '{', '[', 'n':
		return false
	}
	hv, ok := parseIntHeader(h)
	if !ok {
		return false
	}
	if bv, ok := jsonInteger(raw); ok {
		return bv == hv
	}
	// Exponent forms and long fractions are rare: compare exactly (a float
	// would round 1.00000000000000001 to 1).
	var r big.Rat
	if _, ok := r.SetString(string(raw)); !ok {
		return false
	}
	return r.IsInt() && r.Num().IsInt64() && r.Num().Int64() == hv
}

// jsonInteger reads a JSON number without exponent whose fraction, if
// any, is all zeros ("42", "-7", "42.0"). ok is false for other forms.
func jsonInteger(raw []byte) (int64, bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var n int64
	i := 0
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		if i >= 16 {
			return 0, false
		}
		n = n*10 + int64(raw[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && raw[i] == '0'; i++ {
		}
	}
	if i != len(raw) {
		return 0, false // exponent or a non-zero fraction
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseIntHeader parses a decimal integer header value within ±(2^53−1).
func parseIntHeader(h []byte) (int64, bool) {
	if len(h) == 0 || len(h) > 17 {
		return 0, false
	}
	neg := h[0] == '-'
	if neg {
		h = h[1:]
	}
	if len(h) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range h {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if n > 1<<53-1 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// shortEqual reports whether a and b hold the same bytes. Values of 4 to
// 16 bytes (a path like /mcp, a protocol version, a method name) are
// compared by two overlapping loads a side, inlined where it is called;
// the runtime's compare, a call, takes any other length.
func shortEqual(a, b []byte) bool {
	if n := len(a); n == len(b) && uint(n-4) <= 12 {
		if n >= 8 {
			return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
				binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
		}
		return binary.LittleEndian.Uint32(a) == binary.LittleEndian.Uint32(b) &&
			binary.LittleEndian.Uint32(a[n-4:]) == binary.LittleEndian.Uint32(b[n-4:])
	}
	return string(a) == string(b)
}
