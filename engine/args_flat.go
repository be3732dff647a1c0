package engine

import (
	"math"
	"sort"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
)

// flatSchema is the shape most tool schemas have — an object whose
// properties each declare one JSON type and nothing else that constrains
// them, plus a required list, open to other members or closed to them
// (additionalProperties false, what typed tools infer):
//
//	{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}
//
// Such a schema is checked on the raw arguments in one pass over their
// members (codec.ScanMembers), without decoding them and without
// allocating, and gives the verdict and the message the compiled schema
// would give (FuzzFlatMatchesCompiled checks both against the library).
// Anything else — another keyword, a type list, a repeated member, and on a
// closed schema a member it does not name — is left to the compiled
// schema.
type flatSchema struct {
	names    []string // property and required names, sorted
	kinds    []uint8  // per name: its declared type's kind (kindAny: any type)
	required []bool   // per name
	closed   bool     // additionalProperties false: only names may appear
	// For checkPlain: the required names as bits (name i: bit i), and per
	// name the classes of plain values (plainClass) its type accepts.
	reqBits uint32
	accepts []uint8
}

// maxFlat bounds the names a flat schema may check (a stack array holds
// their values).
const maxFlat = 16

// flatten returns the flat form of doc, or nil when doc has another shape.
func flatten(doc any) *flatSchema {
	m, ok := doc.(map[string]any)
	if !ok || !standardDialect(m) || m["type"] != "object" {
		return nil
	}
	types := map[string]string{}
	req := map[string]bool{}
	props := map[string]bool{}
	closed := false
	for k, v := range m {
		switch {
		case k == "type":
		case k == "properties":
			ps, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, sub := range ps {
				p, ok := sub.(map[string]any)
				if !ok {
					return nil
				}
				t := ""
				for pk, pv := range p {
					switch {
					case pk == "type":
						s, ok := pv.(string)
						if !ok || kindOf(s) == kindAny {
							return nil
						}
						t = s
					case isAnnotation(pk) && pk != "$schema" && pk != "$id":
					default:
						return nil
					}
				}
				types[name] = t
				props[name] = true
			}
		case k == "required":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, x := range list {
				s, ok := x.(string)
				if !ok || req[s] {
					return nil // invalid or repeated: the compiler decides
				}
				req[s] = true
			}
		case k == "additionalProperties":
			switch v {
			case true:
			case false:
				closed = true
			default:
				return nil
			}
		case isAnnotation(k):
		default:
			return nil
		}
	}
	if closed {
		for name := range req {
			if !props[name] {
				// Required but not a property of a closed object: no
				// instance passes; the compiler says why.
				return nil
			}
		}
	}
	f := &flatSchema{closed: closed}
	for name := range req {
		if _, ok := types[name]; !ok {
			types[name] = ""
		}
	}
	for name := range types {
		f.names = append(f.names, name)
	}
	if len(f.names) > maxFlat {
		return nil
	}
	// The compiled check's order (describe), so both list alike.
	sort.Slice(f.names, func(i, j int) bool { return lessSegment(f.names[i], f.names[j]) })
	for i, name := range f.names {
		k := kindOf(types[name])
		f.kinds = append(f.kinds, k)
		f.required = append(f.required, req[name])
		if req[name] {
			f.reqBits |= 1 << i
		}
		f.accepts = append(f.accepts, plainAccepts(k))
	}
	return f
}

// The classes of the values Peek records (codec.Envelope.PlainArguments),
// by first byte: a number there is always a non-negative integer.
const (
	plainString uint8 = 1 << iota
	plainInteger
	plainBoolean
	plainNull
)

// plainClass is the class of a plain value by its first byte (0: not one).
var plainClass = func() (t [256]uint8) {
	t['"'] = plainString
	for c := '0'; c <= '9'; c++ {
		t[c] = plainInteger
	}
	t['t'], t['f'] = plainBoolean, plainBoolean
	t['n'] = plainNull
	return
}()

// plainAccepts is the set of plain classes whose values are of kind k.
func plainAccepts(k uint8) uint8 {
	switch k {
	case kindAny:
		return plainString | plainInteger | plainBoolean | plainNull
	case kindString:
		return plainString
	case kindNumber, kindInteger:
		return plainInteger
	case kindBoolean:
		return plainBoolean
	case kindNull:
		return plainNull
	}
	return 0 // object, array: never plain
}

// check reports the verdict on args (nil: absent, an empty object; else a
// JSON object, see argsObject), and ok false when the compiled schema must
// decide (a repeated member; a member a closed schema does not name).
func (f *flatSchema) check(args []byte) (e *ArgumentsError, ok bool) {
	var arr [maxFlat][]byte
	return f.checkInto(args, &arr)
}

// checkInto is check leaving each name's raw value (nil: absent) in vals,
// in f.names' order, for a typed tool's decoder to reuse (flatCodec.from).
func (f *flatSchema) checkInto(args []byte, arr *[maxFlat][]byte) (e *ArgumentsError, ok bool) {
	return f.checkFrom(args, nil, arr)
}

// checkFrom is checkInto; env, when not nil, is the envelope whose
// Arguments args is, and its ScanArguments (the same results as
// ScanMembers) replaces the scan.
func (f *flatSchema) checkFrom(args []byte, env *codec.Envelope, arr *[maxFlat][]byte) (e *ArgumentsError, ok bool) {
	vals := arr[:len(f.names)]
	if env != nil {
		if n := env.PlainArguments(); n >= 0 {
			if pass, decided := f.checkPlain(env, n, vals); decided {
				if pass {
					return nil, true
				}
				return f.verdict(vals), true
			}
			return nil, false
		}
	}
	if args == nil {
		for i := range vals { // ScanMembers clears them otherwise
			vals[i] = nil
		}
	} else {
		var n int
		var err error
		if env != nil {
			n, err = env.ScanArguments(f.names, vals)
		} else {
			n, err = codec.ScanMembers(args, f.names, vals)
		}
		if err != nil {
			return nil, false
		}
		if f.closed {
			found := 0
			for _, v := range vals {
				if v != nil {
					found++
				}
			}
			if n > found {
				return nil, false
			}
		}
	}
	return f.verdict(vals), true
}

// checkPlain is checkFrom on the n members Peek recorded of env's
// arguments (codec.Envelope.PlainArguments), in one pass over them: it
// fills vals as ScanMembers would and reports whether they pass; decided
// is false when the compiled schema must decide (a repeated name of f, a
// member a closed f does not name), as in checkFrom. When they fail,
// verdict(vals) says why.
func (f *flatSchema) checkPlain(env *codec.Envelope, n int, vals [][]byte) (pass, decided bool) {
	for i := 0; i < len(vals); i++ { // not the clear idiom: no call for a few names
		vals[i] = nil
	}
	var seen uint32
	good := true
	for j := range n {
		name, v := env.PlainArgument(j)
		x := -1
		for i, fn := range f.names {
			if len(fn) == len(name) && fn == string(name) {
				x = i
				break
			}
		}
		if x < 0 {
			if f.closed {
				return false, false
			}
			continue
		}
		if seen&(1<<x) != 0 {
			return false, false
		}
		seen |= 1 << x
		vals[x] = v
		good = good && f.accepts[x]&plainClass[v[0]] != 0
	}
	return good && seen&f.reqBits == f.reqBits, true
}

// verdict lists what fails in vals, the raw values of f.names (nil:
// absent); nil when nothing does.
func (f *flatSchema) verdict(vals [][]byte) (e *ArgumentsError) {
	for i, name := range f.names {
		v := vals[i]
		switch {
		case v == nil && f.required[i]:
			e = f.fail(e, name, ": required")
		case v == nil || f.kinds[i] == kindAny || rawHas(v, f.kinds[i]):
		default:
			e = f.fail(e, name, ": expected "+kindNames[f.kinds[i]]+", got "+rawKind(v))
		}
	}
	return e
}

// fail adds the failure of the top-level member name to e.
func (f *flatSchema) fail(e *ArgumentsError, name, what string) *ArgumentsError {
	if e == nil {
		e = &ArgumentsError{}
	}
	var b strings.Builder
	b.WriteString("arguments")
	writeSegment(&b, name)
	e.add(b.String() + what)
	return e
}

// rawKind names the JSON type of a raw value, as the validator does
// ("number" for every number).
func rawKind(v []byte) string { return kindNames[rawClass(v)] }

// JSON types as flatSchema compares them: the kind of a raw value is its
// first byte's (rawClass), plus kindInteger, a number without a fraction.
const (
	kindAny uint8 = iota
	kindString
	kindObject
	kindArray
	kindBoolean
	kindNull
	kindNumber
	kindInteger
)

// kindNames are the JSON Schema type names of the kinds.
var kindNames = [...]string{kindString: "string", kindObject: "object", kindArray: "array", kindBoolean: "boolean",
	kindNull: "null", kindNumber: "number", kindInteger: "integer"}

// kindOf is the kind of the JSON Schema type t ("" and unknown: any).
func kindOf(t string) uint8 {
	for k, name := range kindNames {
		if k != int(kindAny) && name == t {
			return uint8(k)
		}
	}
	return kindAny
}

// rawClass is the kind of the raw value v (valid JSON), never kindInteger.
func rawClass(v []byte) uint8 {
	switch firstByte(v) {
	case '"':
		return kindString
	case '{':
		return kindObject
	case '[':
		return kindArray
	case 't', 'f':
		return kindBoolean
	case 'n':
		return kindNull
	}
	return kindNumber
}

// rawHas reports whether the raw value v (valid JSON) is of kind k (not
// kindAny). An integer is a number without a fractional part (integral).
func rawHas(v []byte, k uint8) bool {
	c := rawClass(v)
	if k == kindInteger {
		return c == kindNumber && integral(v)
	}
	return c == k
}

// integral reports whether the JSON number literal n has no fractional part
// (JSON Schema's integer: 1.0 and 1e2 are integers, 1.5 and 1e-1 are not).
// The value is digits × 10^(exp − len(frac)); it is integral when it is
// zero or that power, plus the digits' trailing zeros, is not negative.
func integral(n []byte) bool {
	i := 0
	for i < len(n) && (n[i] == ' ' || n[i] == '\t' || n[i] == '\n' || n[i] == '\r') {
		i++
	}
	if i < len(n) && n[i] == '-' {
		i++
	}
	zeros, fracLen, nonzero := 0, 0, false
	inFrac := false
	for ; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '.':
			inFrac = true
			continue
		case c >= '0' && c <= '9':
		default:
			goto exp
		}
		if inFrac {
			fracLen++
		}
		if c == '0' {
			zeros++
		} else {
			zeros, nonzero = 0, true
		}
	}
exp:
	e := 0
	var big uint64 // the exponent's magnitude, to see whether it fits an int64
	overflow := false
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		neg := false
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			neg = n[i] == '-'
			i++
		}
		limit := uint64(math.MaxInt64)
		if neg {
			limit++
		}
		for ; i < len(n) && n[i] >= '0' && n[i] <= '9'; i++ {
			d := uint64(n[i] - '0')
			if e < 1<<30 {
				e = e*10 + int(d)
			}
			if big > (limit-d)/10 {
				overflow = true
			} else if !overflow {
				big = big*10 + d
			}
		}
		if neg {
			e = -e
		}
	}
	if !nonzero {
		// Zero is an integer whatever its exponent, as long as math/big
		// can read the exponent at all (an int64).
		return !overflow
	}
	if d := e - fracLen; d > 1e6 || d < -1e6 {
		// The schema library reads numbers with math/big, which refuses a
		// decimal exponent past a million (not an integer to it): the flat
		// check gives the same verdict (FuzzFlatMatchesCompiled).
		return false
	}
	return e-fracLen+zeros >= 0
}
