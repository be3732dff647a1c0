package codec

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Low-level RFC 8259 scanners shared by Peek and LookupPath. They work on a
// byte slice and an index and return the index just past what they scanned,
// or a negative scanErr* value. They never allocate and never recurse.

const (
	scanErrParse = -1 // RFC 8259 syntax error, truncation included
	scanErrUTF8  = -2 // invalid UTF-8 inside a string (GEN-02)
	scanErrDeep  = -3 // nesting deeper than the configured limit (A9)
)

// String scan flags.
const (
	strEscaped  uint8 = 1 << iota // the string contains at least one backslash escape
	strNonASCII                   // the string contains at least one byte >= 0x80
)

// SWAR constants: one byte lane each.
const (
	lanes01 = 0x0101010101010101
	lanes20 = 0x2020202020202020
	lanes22 = 0x2222222222222222 // '"'
	lanes5c = 0x5c5c5c5c5c5c5c5c // '\\'
	lanes80 = 0x8080808080808080
)

// strPlain[c] is true for bytes a string scanner can step over without a
// second look: printable ASCII other than '"' and '\\'.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return
}()

// hexVal[c] is the value of hex digit c, or 0xff.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return
}()

// specialMask returns a word whose lowest set 0x80 bit marks the first byte of
// x (little endian) that is '"', '\\', < 0x20 or >= 0x80; zero when there is
// none. Borrows only propagate upwards out of a lane that is itself a hit, so
// the lowest flagged lane is always exact.
func specialMask(x uint64) uint64 {
	return ((x - lanes20) | ((x ^ lanes22) - lanes01) | ((x ^ lanes5c) - lanes01) | x) & lanes80
}

// word loads the 8 bytes at b[i:i+8] as a little-endian uint64 without a
// bounds check. Callers must have checked 0 <= i && i+8 <= len(b) (every
// index in this package starts at 0 and only grows).
func word(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)), 8))
}

// skipWS skips JSON insignificant whitespace (RFC 8259 §2).
func skipWS(b []byte, i int) int {
	for uint(i) < uint(len(b)) {
		c := b[i]
		if c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
			return i
		}
		i++
	}
	return i
}

// scanString scans a JSON string whose opening quote is at b[i-1]. It
// validates escapes and UTF-8 and returns the index just past the closing
// quote and the strEscaped/strNonASCII flags.
//
// The fast path looks at 8 bytes per step and returns as soon as the first
// special byte is the closing quote; everything else (escapes, non-ASCII,
// control bytes, the last < 8 bytes of b) goes to scanStringSlow.
func scanString(b []byte, i int) (int, uint8) {
	if e := quickString(b, i); e >= 0 {
		return e, 0
	} else {
		return scanStringSlow(b, ^e, 0)
	}
}

// scanStringSlow continues scanString at b[i] with flags fl.
func scanStringSlow(b []byte, i int, fl uint8) (int, uint8) {
	for {
		if i >= 0 && i+8 <= len(b) {
			m := specialMask(word(b, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for uint(i) < uint(len(b)) && strPlain[b[i]] {
				i++
			}
			if uint(i) >= uint(len(b)) {
				return scanErrParse, fl
			}
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, fl
		case c == '\\':
			fl |= strEscaped
			if i+1 >= len(b) {
				return scanErrParse, fl
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hexVal[b[i+2]]|hexVal[b[i+3]]|hexVal[b[i+4]]|hexVal[b[i+5]] == 0xff {
					return scanErrParse, fl
				}
				i += 6
			default:
				return scanErrParse, fl
			}
		case c < 0x20:
			return scanErrParse, fl
		default: // >= 0x80
			fl |= strNonASCII
			n := utf8SeqLen(b, i)
			if n == 0 {
				return scanErrUTF8, fl
			}
			i += n
		}
	}
}

// utf8SeqLen returns the length of the valid UTF-8 sequence starting at b[i]
// (b[i] >= 0x80), or 0 when it is invalid: stray continuation byte, overlong
// form, UTF-16 surrogate (U+D800–U+DFFF), above U+10FFFF or truncated.
func utf8SeqLen(b []byte, i int) int {
	c := b[i]
	switch {
	case c < 0xC2:
		return 0
	case c < 0xE0:
		if i+1 < len(b) && b[i+1]&0xC0 == 0x80 {
			return 2
		}
		return 0
	case c < 0xF0:
		if i+2 >= len(b) {
			return 0
		}
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
		if c1 := b[i+1]; c1 < lo || c1 > hi || b[i+2]&0xC0 != 0x80 {
			return 0
		}
		return 3
	case c < 0xF5:
		if i+3 >= len(b) {
			return 0
		}
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
		if c1 := b[i+1]; c1 < lo || c1 > hi || b[i+2]&0xC0 != 0x80 || b[i+3]&0xC0 != 0x80 {
			return 0
		}
		return 4
	}
	return 0
}

// scanNumber scans an RFC 8259 number starting at b[i] ('-' or a digit) and
// reports whether it is an integer (no fraction, no exponent).
func scanNumber(b []byte, i int) (int, bool) {
	if uint(i) >= uint(len(b)) {
		return scanErrParse, false
	}
	if b[i] == '-' {
		i++
		if uint(i) >= uint(len(b)) {
			return scanErrParse, false
		}
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for uint(i) < uint(len(b)) && b[i]-'0' <= 9 {
			i++
		}
	default:
		return scanErrParse, false
	}
	isInt := true
	if uint(i) < uint(len(b)) && b[i] == '.' {
		isInt = false
		i++
		if uint(i) >= uint(len(b)) || b[i]-'0' > 9 {
			return scanErrParse, false
		}
		for uint(i) < uint(len(b)) && b[i]-'0' <= 9 {
			i++
		}
	}
	if uint(i) < uint(len(b)) && b[i]|0x20 == 'e' {
		isInt = false
		i++
		if uint(i) < uint(len(b)) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if uint(i) >= uint(len(b)) || b[i]-'0' > 9 {
			return scanErrParse, false
		}
		for uint(i) < uint(len(b)) && b[i]-'0' <= 9 {
			i++
		}
	}
	return i, isInt
}

// scanLiteral checks for true, false or null at b[i].
func scanLiteral(b []byte, i int) int {
	if uint(i) >= uint(len(b)) {
		return scanErrParse
	}
	switch b[i] {
	case 't':
		if i+4 <= len(b) && string(b[i:i+4]) == "true" {
			return i + 4
		}
	case 'f':
		if i+5 <= len(b) && string(b[i:i+5]) == "false" {
			return i + 5
		}
	case 'n':
		if i+4 <= len(b) && string(b[i:i+4]) == "null" {
			return i + 4
		}
	}
	return scanErrParse
}

// stackInline is how many nesting levels the skipper tracks without a heap
// allocation (DefaultMaxDepth fits).
const stackInline = 256

// skipper validates and skips whole JSON values without recursion: the kind
// of each open container (object or array) is one bit of a bit stack.
type skipper struct {
	max  int
	bits [stackInline / 64]uint64
	deep []uint64 // levels >= stackInline; allocated only when MaxDepth > 256 and reached
}

func (s *skipper) push(d int, obj bool) {
	if uint(d) >= stackInline {
		s.pushDeep(d, obj)
		return
	}
	w, m := uint(d)>>6, uint64(1)<<(d&63)
	if obj {
		s.bits[w] |= m
	} else {
		s.bits[w] &^= m
	}
}

func (s *skipper) pushDeep(d int, obj bool) {
	d -= stackInline
	for d>>6 >= len(s.deep) {
		s.deep = append(s.deep, 0)
	}
	w, m := d>>6, uint64(1)<<(d&63)
	if obj {
		s.deep[w] |= m
	} else {
		s.deep[w] &^= m
	}
}

func (s *skipper) isObj(d int) bool {
	if uint(d) >= stackInline {
		d -= stackInline
		return s.deep[d>>6]&(uint64(1)<<(d&63)) != 0
	}
	return s.bits[uint(d)>>6]&(uint64(1)<<(d&63)) != 0
}

// skip validates the JSON value starting at b[i] (no leading whitespace) that
// sits inside containers nested depth deep, and returns the index just past
// it. A container opened at depth d+1 > s.max fails with scanErrDeep.
//
// The loop keeps the kind of the innermost open container in inObj and
// reads the bit stack only when a container closes.
func (s *skipper) skip(b []byte, i, depth int) int {
	base := depth
	inObj, wantKey := false, false
	for {
		if wantKey {
			// `"name" ws : ws` of an object member.
			if uint(i) >= uint(len(b)) || b[i] != '"' {
				return scanErrParse
			}
			if e := quickString(b, i+1); e >= 0 {
				i = e
			} else if i, _ = scanStringSlow(b, ^e, 0); i < 0 {
				return i
			}
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
			wantKey = false
		}
		// A value is expected at b[i].
		if uint(i) >= uint(len(b)) {
			return scanErrParse
		}
		switch c := b[i]; c {
		case '"':
			if e := quickString(b, i+1); e >= 0 {
				i = e
			} else if i, _ = scanStringSlow(b, ^e, 0); i < 0 {
				return i
			}
		case '{', '[':
			depth++
			if depth > s.max {
				return scanErrDeep
			}
			inObj = c == '{'
			s.push(depth, inObj)
			i++
			if uint(i) < uint(len(b)) && b[i] <= ' ' {
				i = skipWS(b, i)
			}
			if uint(i) >= uint(len(b)) {
				return scanErrParse
			}
			if c := b[i]; (c == '}' && inObj) || (c == ']' && !inObj) {
				i++
				depth--
				if depth > base {
					inObj = s.isObj(depth)
				}
				break
			}
			wantKey = inObj
			continue
		case 't', 'f', 'n':
			if i = scanLiteral(b, i); i < 0 {
				return i
			}
		default:
			if c != '-' && c-'0' > 9 {
				return scanErrParse
			}
			if i, _ = scanNumber(b, i); i < 0 {
				return i
			}
		}
		// A value ended just before b[i]: close containers or move on.
		for depth > base {
			if uint(i) < uint(len(b)) && b[i] <= ' ' {
				i = skipWS(b, i)
			}
			if uint(i) >= uint(len(b)) {
				return scanErrParse
			}
			c := b[i]
			i++
			if c == ',' {
				if uint(i) < uint(len(b)) && b[i] <= ' ' {
					i = skipWS(b, i)
				}
				wantKey = inObj
				break
			}
			if (c == '}' && inObj) || (c == ']' && !inObj) {
				depth--
				if depth > base {
					inObj = s.isObj(depth)
				}
				continue
			}
			return scanErrParse
		}
		if depth == base {
			return i
		}
	}
}

// quickString is the inlinable fast path of scanString: when the first
// special byte within the 8 bytes at b[i:] is the closing quote, it returns
// the index just past it. Otherwise it returns ^j (negative), j being where
// scanStringSlow must continue: i+8 when those 8 bytes were all plain, else i.
func quickString(b []byte, i int) int {
	if i >= 0 && i+8 <= len(b) {
		x := word(b, i)
		q := x ^ lanes22
		// The lowest bit of quote is exactly the first '"' (borrows only
		// propagate out of a zero lane); other flags '\\', < 0x20, >= 0x80.
		// Deriving the end from quote alone keeps the index dependency
		// chain short; other is only tested by a predictable branch.
		quote := (q - lanes01) &^ q & lanes80
		other := ((x - lanes20) | ((x ^ lanes5c) - lanes01) | x) & lanes80
		if quote != 0 && other&(quote&-quote-1) == 0 {
			return i + bits.TrailingZeros64(quote)>>3 + 1
		}
		if quote|other == 0 {
			return ^(i + 8) // 8 plain bytes: the slow path continues after them
		}
	}
	return ^i
}
