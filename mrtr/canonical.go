package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
)

// The argument digest binds a state to the arguments of the request that
// received it (SEC-07). A client retries with "the original params"
// (MRTR-05), but nothing obliges it to send the same bytes: it may decode
// and re-encode them, reorder members, change spacing or escapes. So the
// digest is taken over the arguments' JSON value, not their text, and two
// argument texts have the same digest exactly when they decode to the same
// value, as a handler decoding them sees it:
//
//   - whitespace and the order of object members do not matter;
//   - strings compare by their decoded characters ("\u0041" is "A"; an
//     escaped lone surrogate decodes to U+FFFD, as the decoder makes it);
//   - numbers compare by exact decimal value: 1, 1.0, 10e-1 and 1E0 are
//     one value, -0 is 0, and no value is rounded through float64, so
//     9007199254740993 and 9007199254740992 stay apart;
//   - a member repeated in one object counts once, with its last value
//     (what the decoder keeps);
//   - absent arguments, null and {} are one value (a request without
//     arguments, like resources/read, binds to {}).
//
// Arrays keep their order. The value is hashed in a tagged, length-prefixed
// form, so no two different values produce the same byte stream.

// maxCanonDepth bounds the recursion of the digest. The engine has
// already refused deeper messages (engine.Config.MaxDepth); this keeps a
// Binding built by hand from recursing without end.
const maxCanonDepth = 10000

// errArguments wraps every reason the digest cannot be taken.
var errArguments = errors.New("mrtr: arguments")

var (
	errNotJSON     = fmt.Errorf("%w are not valid JSON", errArguments)
	errCanonDepth  = fmt.Errorf("%w nest too deeply", errArguments)
	errNumber      = fmt.Errorf("%w hold a number that is not JSON", errArguments)
	errUnknownType = fmt.Errorf("%w decode to an unexpected type", errArguments)
)

// argsDigest returns the SHA-256 of the canonical form of args.
func argsDigest(args []byte) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	v, err := codec.DecodeAny(args)
	if err != nil {
		return sum, errNotJSON
	}
	h := sha256.New()
	var w canonWriter
	w.h = h
	if err := w.value(v, 0); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// canonWriter writes the tagged form of a decoded value into h.
type canonWriter struct {
	h   hash.Hash
	buf []byte
}

func (w *canonWriter) tag(t byte) { w.h.Write([]byte{t}) }

func (w *canonWriter) lp(s string) {
	w.buf = binary.AppendUvarint(w.buf[:0], uint64(len(s)))
	w.h.Write(w.buf)
	w.h.Write([]byte(s))
}

func (w *canonWriter) count(n int) {
	w.buf = binary.AppendUvarint(w.buf[:0], uint64(n))
	w.h.Write(w.buf)
}

func (w *canonWriter) value(v any, depth int) error {
	if depth > maxCanonDepth {
		return errCanonDepth
	}
	switch x := v.(type) {
	case nil:
		w.tag('z')
	case bool:
		if x {
			w.tag('t')
		} else {
			w.tag('f')
		}
	case string:
		w.tag('s')
		w.lp(x)
	case json.Number:
		n, err := canonNumber(string(x))
		if err != nil {
			return err
		}
		w.tag('n')
		w.lp(n)
	case []any:
		w.tag('a')
		w.count(len(x))
		for _, e := range x {
			if err := w.value(e, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.tag('o')
		w.count(len(keys))
		for _, k := range keys {
			w.lp(k)
			if err := w.value(x[k], depth+1); err != nil {
				return err
			}
		}
	default:
		// DecodeAny yields nothing else; a float64 would mean the decoder
		// dropped UseNumber, and rounding must not happen silently.
		return errUnknownType
	}
	return nil
}

// canonNumber returns the canonical spelling of the JSON number lit: its
// exact value as [-]D"e"E, where D is the significant digits without
// leading or trailing zeros (or "0") and E the decimal exponent of D's last
// digit. 120 → "12e1", 0.5 → "5e-1", -0 → "0e0", 1.0 → "1e0".
func canonNumber(lit string) (string, error) {
	i, n := 0, len(lit)
	neg := false
	if i < n && lit[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < n && isDigit(lit[i]) {
		i++
	}
	intPart := lit[intStart:i]
	if intPart == "" {
		return "", errNumber
	}
	frac := ""
	if i < n && lit[i] == '.' {
		i++
		s := i
		for i < n && isDigit(lit[i]) {
			i++
		}
		frac = lit[s:i]
		if frac == "" {
			return "", errNumber
		}
	}
	expNeg, expDigits := false, ""
	if i < n && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < n && (lit[i] == '+' || lit[i] == '-') {
			expNeg = lit[i] == '-'
			i++
		}
		s := i
		for i < n && isDigit(lit[i]) {
			i++
		}
		expDigits = lit[s:i]
		if expDigits == "" {
			return "", errNumber
		}
	}
	if i != n {
		return "", errNumber
	}

	// value = digits × 10^(exp - len(frac)); then drop zeros at both ends.
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0e0", nil
	}
	trimmed := strings.TrimRight(digits, "0")
	shift := int64(len(digits)-len(trimmed)) - int64(len(frac))

	var exp string
	expDigits = strings.TrimLeft(expDigits, "0")
	if len(expDigits) <= 17 { // fits an int64 with room for shift
		e := int64(0)
		if expDigits != "" {
			e, _ = strconv.ParseInt(expDigits, 10, 64)
		}
		if expNeg {
			e = -e
		}
		exp = strconv.FormatInt(e+shift, 10)
	} else {
		e, _ := new(big.Int).SetString(expDigits, 10)
		if expNeg {
			e.Neg(e)
		}
		exp = e.Add(e, big.NewInt(shift)).String()
	}
	if neg {
		return "-" + trimmed + "e" + exp, nil
	}
	return trimmed + "e" + exp, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
