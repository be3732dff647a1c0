package codec

import "bytes"

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

// DefaultMaxDepth is the nesting limit used when PeekOptions.MaxDepth is 0
// (RELIABILITY.md defaults table; A9).
const DefaultMaxDepth = 128

// MaxDepthLimit is the hard nesting cap: larger or negative
// PeekOptions.MaxDepth values are clamped to it.
const MaxDepthLimit = 4096

// Member names Peek looks at (MCP 2026-07-28, TRANSPORTS.md §1.2).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaProgressToken      = "progressToken"
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

	HasResult, HasError bool
}

// PeekOptions tunes PeekWith.
type PeekOptions struct {
	// MaxDepth is the deepest container nesting accepted, counting the
	// top-level object as 1 (so "params" is 2 and "_meta" is 3).
	// 0 => DefaultMaxDepth (128). Negative or above MaxDepthLimit =>
	// MaxDepthLimit (4096); levels beyond 256 cost one allocation when reached.
	MaxDepth int
}

// Peek is PeekWith(msg, env, PeekOptions{}).
func Peek(msg []byte, env *Envelope) error {
	return PeekWith(msg, env, PeekOptions{})
}

// Member keys at the three inspected levels. keyFold marks a name that is
// not a recognised member but case-folds to one (A10).
const (
	keyUnknown = iota
	keyFold

	keyJSONRPC
	keyID
	keyMethod
	keyParams
	keyResult
	keyError

	keyName
	keyURI
	keyArguments
	keyMeta
	keyRequestID

	keyProtocolVersion
	keyClientCapabilities
	keyLogLevel
	keyProgressToken
)

var (
	topNames    = [][]byte{[]byte("jsonrpc"), []byte("id"), []byte("method"), []byte("params"), []byte("result"), []byte("error")}
	paramsNames = [][]byte{[]byte("name"), []byte("uri"), []byte("arguments"), []byte("_meta"), []byte("requestId")}
	metaNames   = [][]byte{[]byte(MetaProtocolVersion), []byte(MetaClientCapabilities), []byte(MetaLogLevel), []byte(MetaProgressToken)}
)

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
	bad uint8
	sk  skipper
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
// recognised member that appears twice, or a member name that is not a
// recognised one but case-folds to one under Unicode simple folding
// ("Method", "paramſ", "\u212Aind"-style Kelvin sign) at the top, params or
// _meta level is ErrDuplicateKey (A10, CVE-2026-27896); "jsonrpc" not exactly
// "2.0" is ErrBadVersion; a request id that is not a string or an integer is
// ErrBadID (GEN-03, A12); no "method", "result" or "error" is ErrNoMethod;
// a non-string method is ErrBadMethod; params that is not an object is
// ErrBadParams; a response with both result and error is ErrBadResponse.
// On these errors env keeps whatever was read (Kind when determinable, a
// valid ID), so the error reply can echo the id (HVAL-03).
//
// Members that are not strings where a string is expected (name, uri,
// logLevel, protocolVersion) are left with Present == false.
func PeekWith(msg []byte, env *Envelope, o PeekOptions) error {
	*env = Envelope{}
	p := parser{b: msg, env: env}
	p.sk.max = o.MaxDepth
	if p.sk.max == 0 {
		p.sk.max = DefaultMaxDepth
	} else if p.sk.max < 0 || p.sk.max > MaxDepthLimit {
		p.sk.max = MaxDepthLimit
	}

	i := skipWS(msg, 0)
	if i >= len(msg) {
		return ErrParse
	}
	var end int
	c := msg[i]
	if c == '{' {
		end = p.top(i + 1)
	} else {
		end = p.sk.skip(msg, i, 0)
	}
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
	return p.finish()
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

// member scans `"name" ws : ws` at b[i]. It returns the key's raw bytes,
// its scan flags and the index of the value.
func member(b []byte, i int) ([]byte, uint8, int) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, scanErrParse
	}
	e, fl := scanString(b, i+1)
	if e < 0 {
		return nil, 0, e
	}
	key := b[i+1 : e-1]
	e = skipWS(b, e)
	if e >= len(b) || b[e] != ':' {
		return nil, 0, scanErrParse
	}
	e = skipWS(b, e+1)
	if e >= len(b) {
		return nil, 0, scanErrParse
	}
	return key, fl, e
}

// next moves past the separator after a member value. It returns the index
// of the next member name, or the index just past '}' and true when the
// object ended.
func next(b []byte, i int) (int, bool) {
	i = skipWS(b, i)
	if i >= len(b) {
		return scanErrParse, false
	}
	switch b[i] {
	case ',':
		return skipWS(b, i+1), false
	case '}':
		return i + 1, true
	}
	return scanErrParse, false
}

// see records key k at one level and reports whether it should be handled;
// a repeat or a case-variant is flagged and then skipped like an unknown key.
func (p *parser) see(seen *uint32, k int) bool {
	if k == keyUnknown {
		return false
	}
	if k == keyFold || *seen&(1<<k) != 0 {
		p.bad |= badDup
		return false
	}
	*seen |= 1 << k
	return true
}

// top parses the members of the top-level object; i is just past '{'.
func (p *parser) top(i int) int {
	b, env := p.b, p.env
	i = skipWS(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	var seen uint32
	for {
		key, fl, v := member(b, i)
		if v < 0 {
			return v
		}
		i = v
		k := classifyTop(key, fl)
		if !p.see(&seen, k) {
			k = keyUnknown
		}
		switch k {
		case keyJSONRPC:
			p.bad |= sawVersion
			if b[i] == '"' {
				e, sfl := scanString(b, i+1)
				if e < 0 {
					return e
				}
				s := Str{Raw: b[i+1 : e-1], Escaped: sfl&strEscaped != 0, Present: true}
				if !s.EqualString("2.0") {
					p.bad |= badVersion
				}
				i = e
			} else {
				p.bad |= badVersion
				i = p.sk.skip(b, i, 1)
			}
		case keyID:
			i = p.id(i)
		case keyMethod:
			p.bad |= sawMethod
			if b[i] == '"' {
				e, sfl := scanString(b, i+1)
				if e < 0 {
					return e
				}
				env.Method = Str{Raw: b[i+1 : e-1], Escaped: sfl&strEscaped != 0, Present: true}
				i = e
			} else {
				p.bad |= badMethod
				i = p.sk.skip(b, i, 1)
			}
		case keyParams:
			if b[i] == '{' {
				if p.sk.max < 2 {
					return scanErrDeep
				}
				e := p.params(i + 1)
				if e < 0 {
					return e
				}
				env.Params = b[i:e]
				i = e
			} else {
				p.bad |= badParams
				i = p.sk.skip(b, i, 1)
			}
		case keyResult:
			env.HasResult = true
			i = p.sk.skip(b, i, 1)
		case keyError:
			env.HasError = true
			i = p.sk.skip(b, i, 1)
		default:
			i = p.sk.skip(b, i, 1)
		}
		if i < 0 {
			return i
		}
		var done bool
		if i, done = next(b, i); done || i < 0 {
			return i
		}
	}
}

// id reads the top-level "id" value at b[i].
func (p *parser) id(i int) int {
	b, env := p.b, p.env
	switch c := b[i]; {
	case c == '"':
		e, _ := scanString(b, i+1)
		if e < 0 {
			return e
		}
		env.ID, env.IDKind = b[i:e], IDString
		return e
	case c == '-' || c-'0' <= 9:
		e, isInt := scanNumber(b, i)
		if e < 0 {
			return e
		}
		if isInt {
			env.ID, env.IDKind = b[i:e], IDNumber
		} else {
			env.IDKind = IDInvalid
		}
		return e
	case c == 'n':
		env.IDKind = IDNull
		return scanLiteral(b, i)
	}
	env.IDKind = IDInvalid
	return p.sk.skip(b, i, 1)
}

// params parses the members of the params object (depth 2); i is just past '{'.
func (p *parser) params(i int) int {
	b, env := p.b, p.env
	i = skipWS(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	var seen uint32
	for {
		key, fl, v := member(b, i)
		if v < 0 {
			return v
		}
		i = v
		k := classifyParams(key, fl)
		if !p.see(&seen, k) {
			k = keyUnknown
		}
		switch k {
		case keyName, keyURI:
			if b[i] == '"' {
				e, sfl := scanString(b, i+1)
				if e < 0 {
					return e
				}
				s := Str{Raw: b[i+1 : e-1], Escaped: sfl&strEscaped != 0, Present: true}
				if k == keyName {
					env.Name = s
				} else {
					env.URI = s
				}
				i = e
			} else {
				i = p.sk.skip(b, i, 2)
			}
		case keyArguments:
			e := p.sk.skip(b, i, 2)
			if e < 0 {
				return e
			}
			env.Arguments = b[i:e]
			i = e
		case keyMeta:
			if b[i] == '{' {
				if p.sk.max < 3 {
					return scanErrDeep
				}
				e := p.meta(i + 1)
				if e < 0 {
					return e
				}
				env.Meta = b[i:e]
				i = e
			} else {
				i = p.sk.skip(b, i, 2)
			}
		case keyRequestID:
			var tok []byte
			tok, i = p.token(i, 2)
			env.RequestID = tok
		default:
			i = p.sk.skip(b, i, 2)
		}
		if i < 0 {
			return i
		}
		var done bool
		if i, done = next(b, i); done || i < 0 {
			return i
		}
	}
}

// token skips the value at b[i] (inside a container at depth) and returns its
// raw bytes when it is a string or an integer (request ids, progress tokens).
func (p *parser) token(i, depth int) ([]byte, int) {
	b := p.b
	switch c := b[i]; {
	case c == '"':
		e, _ := scanString(b, i+1)
		if e < 0 {
			return nil, e
		}
		return b[i:e], e
	case c == '-' || c-'0' <= 9:
		e, isInt := scanNumber(b, i)
		if e < 0 || !isInt {
			return nil, e
		}
		return b[i:e], e
	}
	return nil, p.sk.skip(b, i, depth)
}

// meta parses the members of params._meta (depth 3); i is just past '{'.
func (p *parser) meta(i int) int {
	b, env := p.b, p.env
	i = skipWS(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	var seen uint32
	for {
		key, fl, v := member(b, i)
		if v < 0 {
			return v
		}
		i = v
		k := classifyMeta(key, fl)
		if !p.see(&seen, k) {
			k = keyUnknown
		}
		switch k {
		case keyProtocolVersion, keyLogLevel:
			if b[i] == '"' {
				e, sfl := scanString(b, i+1)
				if e < 0 {
					return e
				}
				s := Str{Raw: b[i+1 : e-1], Escaped: sfl&strEscaped != 0, Present: true}
				if k == keyProtocolVersion {
					env.ProtocolVersion = s
				} else {
					env.LogLevel = s
				}
				i = e
			} else {
				if k == keyProtocolVersion {
					env.NonStringVersion = true
				}
				i = p.sk.skip(b, i, 3)
			}
		case keyClientCapabilities:
			e := p.sk.skip(b, i, 3)
			if e < 0 {
				return e
			}
			if b[i] == '{' {
				env.ClientCapabilities = b[i:e]
			}
			i = e
		case keyProgressToken:
			var tok []byte
			tok, i = p.token(i, 3)
			env.ProgressToken = tok
		default:
			i = p.sk.skip(b, i, 3)
		}
		if i < 0 {
			return i
		}
		var done bool
		if i, done = next(b, i); done || i < 0 {
			return i
		}
	}
}

// classifyTop maps a top-level member name to its key.
func classifyTop(key []byte, fl uint8) int {
	if fl&strEscaped == 0 {
		switch string(key) {
		case "jsonrpc":
			return keyJSONRPC
		case "id":
			return keyID
		case "method":
			return keyMethod
		case "params":
			return keyParams
		case "result":
			return keyResult
		case "error":
			return keyError
		}
		return foldKey(key, fl, topNames)
	}
	return classifyEscaped(key, classifyTop)
}

func classifyParams(key []byte, fl uint8) int {
	if fl&strEscaped == 0 {
		switch string(key) {
		case "name":
			return keyName
		case "uri":
			return keyURI
		case "arguments":
			return keyArguments
		case "_meta":
			return keyMeta
		case "requestId":
			return keyRequestID
		}
		return foldKey(key, fl, paramsNames)
	}
	return classifyEscaped(key, classifyParams)
}

func classifyMeta(key []byte, fl uint8) int {
	if fl&strEscaped == 0 {
		switch string(key) {
		case MetaProtocolVersion:
			return keyProtocolVersion
		case MetaClientCapabilities:
			return keyClientCapabilities
		case MetaLogLevel:
			return keyLogLevel
		case MetaProgressToken:
			return keyProgressToken
		}
		return foldKey(key, fl, metaNames)
	}
	return classifyEscaped(key, classifyMeta)
}

// maxFoldLen bounds the byte length of any case-fold variant of a recognised
// name: the only non-ASCII runes that fold to ASCII letters are U+017F (ſ, 2
// bytes) and U+212A (Kelvin sign, 3 bytes), so a variant is at most 3× the
// longest name (42 bytes).
const maxFoldLen = 3 * len(MetaClientCapabilities)

// foldKey reports keyFold when key (unescaped, not an exact recognised name)
// equals one of names under Unicode simple case folding.
func foldKey(key []byte, fl uint8, names [][]byte) int {
	for _, n := range names {
		// An ASCII key can only fold to an ASCII name of the same length.
		if len(key) == len(n) || (fl&strNonASCII != 0 && len(key) > len(n) && len(key) <= 3*len(n)) {
			if bytes.EqualFold(key, n) {
				return keyFold
			}
		}
	}
	return keyUnknown
}

// classifyEscaped unescapes a member name that contains escapes ("\u006d…")
// and classifies the result; a name too long to be a variant is unknown.
func classifyEscaped(key []byte, classify func([]byte, uint8) int) int {
	var buf [maxFoldLen]byte
	n, ok := unescapeBounded(buf[:], key)
	if !ok {
		return keyUnknown
	}
	u := buf[:n]
	fl := uint8(0)
	for _, c := range u {
		if c >= 0x80 {
			fl = strNonASCII
			break
		}
	}
	return classify(u, fl)
}
