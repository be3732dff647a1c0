package codec

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// Append-style encoders: the caller owns dst and gets it back extended. None
// of them allocates when dst has enough spare capacity. Raw JSON arguments
// (id, result, params, token, meta, Error.Data) are copied verbatim and must
// already be valid JSON (spans from Peek, or output of AppendMarshal).

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string with quotes. Invalid UTF-8 bytes
// (encoded surrogates included) become \ufffd, one per byte, as
// encoding/json does, so the output is always valid UTF-8 (A17). Control
// characters are escaped (\n, \r, \t, \b, \f, else \u00XX), U+2028 and
// U+2029 are escaped, and nothing is HTML-escaped.
func AppendString(dst []byte, s string) []byte {
	return AppendStringBytes(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// AppendStringBytes is AppendString for a byte slice.
func AppendStringBytes(dst, s []byte) []byte {
	// The usual short string (a name, a short argument: 8 to 16 bytes)
	// is two overlapping words, each loaded once for the escape test and
	// the copy.
	if l, n := len(s), len(dst); l >= 8 && l <= 16 && cap(dst)-n >= l+2 {
		lo, hi := word(s, 0), word(s, l-8)
		if specialMask(lo)|specialMask(hi) == 0 {
			dst = dst[:n+l+2]
			dst[n] = '"'
			putWord(dst, n+1, lo)
			putWord(dst, n+l-7, hi)
			dst[n+1+l] = '"'
			return dst
		}
	}
	// Otherwise the plain string is found a word at a time (the last
	// word overlapping the one before), then copied with one capacity
	// check.
	i := 0
	for i+8 <= len(s) {
		if m := specialMask(word(s, i)); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			goto escape
		}
		i += 8
	}
	if i < len(s) {
		if len(s) >= 8 {
			if specialMask(word(s, len(s)-8)) != 0 {
				goto escape
			}
		} else {
			for i < len(s) && strPlain[s[i]] {
				i++
			}
			if i < len(s) {
				goto escape
			}
		}
	}
	if n := len(dst); cap(dst)-n >= len(s)+2 {
		dst = dst[:n+len(s)+2]
		dst[n] = '"'
		copy(dst[n+1:], s)
		dst[n+1+len(s)] = '"'
		return dst
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
escape:
	return appendEscaped(dst, s, i)
}

// appendEscaped is AppendStringBytes for an s whose bytes before i need
// no escape.
func appendEscaped(dst, s []byte, i int) []byte {
	dst = append(dst, '"')
	start := 0
	for {
		for i+8 <= len(s) {
			m := specialMask(word(s, i))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(s) && strPlain[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < 0x80 {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		n := utf8SeqLen(s, i)
		if n == 0 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if n == 3 && c == 0xE2 && s[i+1] == 0x80 && s[i+2]&0xFE == 0xA8 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
			i += 3
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const jsonrpcPrefix = `{"jsonrpc":"2.0"`

// AppendResponse appends {"jsonrpc":"2.0","id":<id>,"result":<result>}.
func AppendResponse(dst, id, result []byte) []byte {
	dst = append(dst, jsonrpcPrefix...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendErrorResponse appends
// {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<msg>,"data":<data>}}.
// The "id" member is omitted when id is nil, as for a parse error whose id
// could not be read (GEN-05: never "id":null); "data" is written only when
// e.Data is not nil (GEN-06).
func AppendErrorResponse(dst, id []byte, e *Error) []byte {
	dst = append(dst, jsonrpcPrefix...)
	if id != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, e.Message)
	if e.Data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}', '}')
}

// AppendNotification appends {"jsonrpc":"2.0","method":<method>,"params":<params>};
// "params" is omitted when params is nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, jsonrpcPrefix...)
	dst = append(dst, `,"method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendProgress appends a complete notifications/progress message
// (EXAMPLES.md §3): progressToken is the raw token from the request
// (Envelope.ProgressToken), "total" is written when hasTotal, "message"
// when message != "".
func AppendProgress(dst, token []byte, progress float64, total float64, hasTotal bool, message string) []byte {
	dst = append(dst, jsonrpcPrefix...)
	dst = append(dst, `,"method":"notifications/progress","params":{"progressToken":`...)
	dst = append(dst, token...)
	dst = append(dst, `,"progress":`...)
	dst = AppendFloat(dst, progress)
	if hasTotal {
		dst = append(dst, `,"total":`...)
		dst = AppendFloat(dst, total)
	}
	if message != "" {
		dst = append(dst, `,"message":`...)
		dst = AppendString(dst, message)
	}
	return append(dst, '}', '}')
}

// AppendFloat appends f as a JSON number formatted like encoding/json:
// shortest round-trip digits, integers without ".0", exponent form below
// 1e-6 and from 1e21 up. JSON has no NaN or infinity: those are written as
// null (sonic's EncodeNullForInfOrNan behaviour), so keep them out of
// fields whose schema requires a number.
func AppendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(dst, int64(f), 10) // fast path for integral values
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json does.
		n := len(dst) - start
		if n >= 4 && dst[len(dst)-4] == 'e' && dst[len(dst)-3] == '-' && dst[len(dst)-2] == '0' {
			dst[len(dst)-2] = dst[len(dst)-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}

// AppendTextResult appends a plain-text tool RESULT object (not the envelope):
// {"resultType":"complete","content":[{"type":"text","text":<text>}],"isError":<isError>,"_meta":<meta>}
// with "_meta" omitted when meta is nil (GEN-10: resultType is always set).
func AppendTextResult(dst []byte, text []byte, isError bool, meta []byte) []byte {
	dst = append(dst, `{"resultType":"complete","content":[{"type":"text","text":`...)
	dst = AppendStringBytes(dst, text)
	if isError {
		dst = append(dst, `}],"isError":true`...)
	} else {
		dst = append(dst, `}],"isError":false`...)
	}
	if meta != nil {
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, meta...)
	}
	return append(dst, '}')
}
