package codec

import (
	"bytes"
	"encoding/binary"
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
}

// Rebase re-points every span of e from old, the message Peek read, onto
// buf, a copy of old (same length, same bytes), so that e stays valid once
// old is reused. Spans already outside old are left as they are. A new span
// field must be added here: TestEnvelopeRebaseCoversEveryField fails until
// it is.
func (e *Envelope) Rebase(old, buf []byte) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(old)))
	mv := func(p []byte) []byte {
		if p == nil {
			return nil
		}
		at := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
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
	e.Arguments = mv(e.Arguments)
	e.Meta = mv(e.Meta)
	e.RequestID = mv(e.RequestID)
	e.ProtocolVersion.Raw = mv(e.ProtocolVersion.Raw)
	e.ClientCapabilities = mv(e.ClientCapabilities)
	e.ProgressToken = mv(e.ProgressToken)
	e.LogLevel.Raw = mv(e.LogLevel.Raw)
	e.ClientInfo = mv(e.ClientInfo)
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
	keyClientInfo
)

var (
	topNames    = [][]byte{[]byte("jsonrpc"), []byte("id"), []byte("method"), []byte("params"), []byte("result"), []byte("error")}
	paramsNames = [][]byte{[]byte("name"), []byte("uri"), []byte("arguments"), []byte("_meta"), []byte("requestId")}
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
		end = p.object(i+1, levelTop)
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

// Object levels Peek inspects.
const (
	levelTop    = 1 // the message object
	levelParams = 2 // params
	levelMeta   = 3 // params._meta
)

// object parses the members of the object at level (1 top, 2 params,
// 3 _meta) whose '{' is at b[i-1], records what it finds and returns the
// index just past its '}'. The common compact layout (no whitespace, string
// values) is handled inline; everything else goes through the skipper.
func (p *parser) object(i int, level int) int {
	b, env := p.b, p.env
	var seen uint32
	i = skipWS(b, i)
	if uint(i) < uint(len(b)) && b[i] == '}' {
		return i + 1
	}
	for {
		// Member name.
		if uint(i) >= uint(len(b)) || b[i] != '"' {
			return scanErrParse
		}
		ks := i + 1
		k, e := knownKey(b, ks, level)
		if e < 0 {
			var fl uint8
			if e = quickString(b, ks); e < 0 {
				if e, fl = scanStringSlow(b, ^e, 0); e < 0 {
					return e
				}
			}
			k = classify(b[ks:e-1], fl, level)
		}
		i = e
		if uint(i) < uint(len(b)) && b[i] == ':' {
			i++
		} else {
			i = skipWS(b, i)
			if uint(i) >= uint(len(b)) || b[i] != ':' {
				return scanErrParse
			}
			i++
		}
		if uint(i) < uint(len(b)) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if uint(i) >= uint(len(b)) {
			return scanErrParse
		}

		// Member value.
		if k != keyUnknown {
			if k == keyFold || seen&(1<<k) != 0 {
				p.bad |= badDup // A10: reported once the syntax scan is done
				k = keyUnknown
			} else {
				seen |= 1 << k
			}
		}
		c := b[i]
		if k == keyJSONRPC && hasAt(b, i, `"2.0"`) {
			p.bad |= sawVersion // the usual spelling: no scan, no unescape
			i += 5
		} else if c == '"' {
			// String value: one scan, then record it if wanted.
			e, sfl := quickString(b, i+1), uint8(0)
			if e < 0 {
				if e, sfl = scanStringSlow(b, ^e, 0); e < 0 {
					return e
				}
			}
			if k != keyUnknown {
				p.stringMember(k, Str{Raw: b[i+1 : e-1], Escaped: sfl&strEscaped != 0, Present: true}, b[i:e])
			}
			i = e
		} else {
			switch k {
			case keyUnknown, keyArguments, keyClientCapabilities, keyResult, keyError, keyClientInfo:
				e := p.sk.skip(b, i, level)
				if e < 0 {
					return e
				}
				switch k {
				case keyArguments:
					env.Arguments = b[i:e]
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
					i = p.sk.skip(b, i, level)
					break
				}
				if p.sk.max <= level {
					return scanErrDeep
				}
				e := p.object(i+1, level+1)
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
				i = p.token(k, i, c, level)
			default:
				// A string was expected (jsonrpc, method, name, uri,
				// protocolVersion, logLevel) and something else came.
				switch k {
				case keyJSONRPC:
					p.bad |= badVersion
				case keyMethod:
					p.bad |= badMethod
				case keyProtocolVersion:
					env.NonStringVersion = true
				}
				i = p.sk.skip(b, i, level)
			}
			if i < 0 {
				return i
			}
			if k == keyJSONRPC {
				p.bad |= sawVersion
			} else if k == keyMethod {
				p.bad |= sawMethod
			}
		}

		// Separator.
		if uint(i) < uint(len(b)) && b[i] == ',' {
			i++
			if uint(i) < uint(len(b)) && b[i] == '"' {
				continue
			}
			i = skipWS(b, i)
			continue
		}
		i = skipWS(b, i)
		if uint(i) < uint(len(b)) {
			switch b[i] {
			case '}':
				return i + 1
			case ',':
				i = skipWS(b, i+1)
				continue
			}
		}
		return scanErrParse
	}
}

// stringMember records the string value s (raw token tok, quotes
// included) of recognised member k.
func (p *parser) stringMember(k int, s Str, tok []byte) {
	env := p.env
	switch k {
	case keyJSONRPC:
		p.bad |= sawVersion
		if !s.EqualString("2.0") {
			p.bad |= badVersion
		}
	case keyID:
		env.ID, env.IDKind = tok, IDString
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
		env.Arguments = tok
	case keyRequestID:
		env.RequestID = tok
	case keyProtocolVersion:
		env.ProtocolVersion = s
	case keyLogLevel:
		env.LogLevel = s
	case keyProgressToken:
		env.ProgressToken = tok
	}
	// keyMeta and keyClientCapabilities that are strings are not objects: ignored.
}

// token handles a non-string value, first byte c at b[i], of "id",
// "requestId" or "progressToken": an integer is recorded, anything else is
// skipped (and classified, for "id": GEN-03).
func (p *parser) token(k, i int, c byte, level int) int {
	b, env := p.b, p.env
	if c == '-' || c-'0' <= 9 {
		e, isInt := scanNumber(b, i)
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
	return p.sk.skip(b, i, level)
}

// Words of the _meta names for knownKey (little endian).
var (
	metaW0 = leString("io.model")
	metaW1 = leString("contextp")
	metaW2 = leString("rotocol/")
	pvW0   = leString("protocol")
	pvW1   = leString(`Version"`)
)

func leString(s string) uint64 { return binary.LittleEndian.Uint64([]byte(s)) }

// le64 loads the 8 bytes at b[i:] as a little-endian word; the caller has
// checked i+8 <= len(b).
func le64(b []byte, i int) uint64 { return word(b, i) }

// hasAt reports whether b[i:] starts with lit.
func hasAt(b []byte, i int, lit string) bool {
	return uint(i) <= uint(len(b)) && len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// knownKey is the fast path for member names: it compares b[i:] with each
// recognised name of level followed by its closing quote and, on a match,
// returns the key and the index past the quote without scanning or
// unescaping. Anything else returns -1 and goes through scanString and
// classify (which also catch escaped spellings and case variants).
func knownKey(b []byte, i int, level int) (int, int) {
	if uint(i) >= uint(len(b)) {
		return keyUnknown, -1
	}
	switch level {
	case levelTop:
		switch b[i] {
		case 'j':
			if hasAt(b, i, `jsonrpc"`) {
				return keyJSONRPC, i + 8
			}
		case 'i':
			if hasAt(b, i, `id"`) {
				return keyID, i + 3
			}
		case 'm':
			if hasAt(b, i, `method"`) {
				return keyMethod, i + 7
			}
		case 'p':
			if hasAt(b, i, `params"`) {
				return keyParams, i + 7
			}
		case 'r':
			if hasAt(b, i, `result"`) {
				return keyResult, i + 7
			}
		case 'e':
			if hasAt(b, i, `error"`) {
				return keyError, i + 6
			}
		}
	case levelParams:
		switch b[i] {
		case 'n':
			if hasAt(b, i, `name"`) {
				return keyName, i + 5
			}
		case 'u':
			if hasAt(b, i, `uri"`) {
				return keyURI, i + 4
			}
		case 'a':
			if hasAt(b, i, `arguments"`) {
				return keyArguments, i + 10
			}
		case '_':
			if hasAt(b, i, `_meta"`) {
				return keyMeta, i + 6
			}
		case 'r':
			if hasAt(b, i, `requestId"`) {
				return keyRequestID, i + 10
			}
		}
	default:
		switch b[i] {
		case 'i':
			// "io.modelcontextprotocol/" as three little-endian words.
			if len(b)-i < 33 || (le64(b, i)^metaW0)|(le64(b, i+8)^metaW1)|(le64(b, i+16)^metaW2) != 0 {
				break
			}
			j := i + 24
			switch b[j] {
			case 'p':
				if len(b)-j >= 16 && (le64(b, j)^pvW0)|(le64(b, j+8)^pvW1) == 0 {
					return keyProtocolVersion, j + 16
				}
			case 'c':
				if hasAt(b, j, `clientCapabilities"`) {
					return keyClientCapabilities, j + 19
				}
				if hasAt(b, j, `clientInfo"`) {
					return keyClientInfo, j + 11
				}
			case 'l':
				if hasAt(b, j, `logLevel"`) {
					return keyLogLevel, j + 9
				}
			}
		case 'p':
			if hasAt(b, i, `progressToken"`) {
				return keyProgressToken, i + 14
			}
		}
	}
	return keyUnknown, -1
}

// classify maps a member name at level to its key: a recognised name, an
// unknown one, or keyFold for a name that only case-folds to a recognised one.
func classify(key []byte, fl uint8, level int) int {
	if fl&strEscaped != 0 {
		return classifyEscaped(key, level)
	}
	switch level {
	case levelTop:
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
	case levelParams:
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
	default:
		switch string(key) {
		case MetaProtocolVersion:
			return keyProtocolVersion
		case MetaClientCapabilities:
			return keyClientCapabilities
		case MetaLogLevel:
			return keyLogLevel
		case MetaProgressToken:
			return keyProgressToken
		case MetaClientInfo:
			return keyClientInfo
		}
		// _meta keys are open-ended (reverse-DNS prefixed): a case variant
		// such as "io.modelcontextprotocol/ProtocolVersion" is another key,
		// never the recognised one (META-02), so it is simply unknown.
		return keyUnknown
	}
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
func classifyEscaped(key []byte, level int) int {
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
	return classify(u, fl, level)
}
