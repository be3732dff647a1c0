package codec

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The RFC 8259 grammar, written once for the three readers of the package:
// Peek's object levels (peek.go), the skipper below, and LookupPath and
// LookupMembers (lookup.go). The rules work on a byte slice and an index and
// return the index just past what they read, or a negative scanErr* value.
// They never allocate and never recurse. The names Peek recognises are in
// one table too (keys.go).

const (
	scanErrParse = -1 // RFC 8259 syntax error, truncation included
	scanErrUTF8  = -2 // invalid UTF-8 inside a string (GEN-02)
	scanErrDeep  = -3 // nesting deeper than the configured limit (A9)
	scanErrLine  = -4 // PeekLine declines: the message leaves the usual shape
)

// String scan flags.
const (
	strEscaped  uint8 = 1 << iota // the string contains at least one backslash escape
	strNonASCII                   // the string contains at least one byte >= 0x80
)

// SWAR constants: one byte lane each.
const (
	lanes01 = 0x0101010101010101
	lanes02 = 0x0202020202020202
	lanes21 = 0x2121212121212121
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
	// x^0x02 is below 0x21 exactly for the bytes below 0x20 and '"', so one
	// subtraction finds both.
	return (((x ^ lanes02) - lanes21) | ((x ^ lanes5c) - lanes01) | x) & lanes80
}

// word loads the 8 bytes at b[i:i+8] as a little-endian uint64 without a
// bounds check. Callers must have checked 0 <= i && i+8 <= len(b) (every
// index in this package starts at 0 and only grows).
func word(b []byte, i int) uint64 {
	// An array pointer, unlike unsafe.Slice, costs no overflow check.
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))[:])
}

// byteAt is b[i] without a bounds check, under word's rule (0 <= i <
// len(b)): for an index inside a word the caller loaded.
func byteAt(b []byte, i int) byte {
	return *(*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

// putWord stores x at b[i:i+8], little-endian, without a bounds check,
// under word's rule (0 <= i && i+8 <= len(b)).
func putWord(b []byte, i int, x uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))[:], x)
}

// half loads the 2 bytes at b[i:i+2] as a little-endian uint16 without a
// bounds check, under word's rule (0 <= i && i+2 <= len(b)).
func half(b []byte, i int) uint16 {
	return binary.LittleEndian.Uint16((*[2]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))[:])
}

// isWS[c] is true for the JSON whitespace bytes (RFC 8259 §2: space, tab,
// line feed, carriage return).
var isWS = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipWS skips JSON insignificant whitespace. Every token starts above ' ',
// so compact JSON leaves after one compare, without reading isWS.
func skipWS(b []byte, i int) int {
	for uint(i) < uint(len(b)) && b[i] <= ' ' && isWS[b[i]] {
		i++
	}
	return i
}

// scanString is the string rule: it scans a JSON string whose opening quote
// is at b[i-1], validates escapes and UTF-8, and returns the index just past
// the closing quote and the strEscaped/strNonASCII flags. The hot loops
// call its two halves themselves: plainString, which inlines, and
// scanStringSlow when plainString gives up.
func scanString(b []byte, i int) (int, uint8) {
	if e := plainString(b, i); e >= 0 {
		return e, 0
	} else {
		return scanStringSlow(b, ^e, 0)
	}
}

// plainString is the inlinable fast path of the string rule: it steps over
// plain ASCII 8 bytes at a time and, when the first special byte ('"',
// '\\', < 0x20, >= 0x80) is the closing quote, returns the index just past
// it. Otherwise (an escape, non-ASCII, a control byte, fewer than 8 bytes
// left) it returns ^j, j being where scanStringSlow must continue with no
// flags set. i is the index just past an opening quote the caller has
// read (so 0 < i <= len(b)): the words it loads are then inside b.
func plainString(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := specialMask(word(b, i)); m != 0 {
			if i += bits.TrailingZeros64(m) >> 3; byteAt(b, i) == '"' {
				return i + 1
			}
			return ^i
		}
		i += 8
	}
	return ^i
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

// plainNumber is the inlinable fast path of the number rule for the usual
// case, a non-negative integer: it returns the index just past the digits
// at b[i], or ^i when b[i] starts anything else (a sign, a fraction, an
// exponent, a leading zero, no digit at all) and scanNumber must decide.
func plainNumber(b []byte, i int) int {
	j := i
	for uint(j) < uint(len(b)) && b[j]-'0' <= 9 {
		j++
	}
	if j == i || j-i > 1 && b[i] == '0' || uint(j) < uint(len(b)) && (b[j] == '.' || b[j]|0x20 == 'e') {
		return ^i
	}
	return j
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

// scanLiteral checks for true, false or null at b[i] with one 4-byte load.
func scanLiteral(b []byte, i int) int {
	if i >= 0 && i+4 <= len(b) {
		switch binary.LittleEndian.Uint32(b[i:]) {
		case 't' | 'r'<<8 | 'u'<<16 | 'e'<<24, 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24:
			return i + 4
		case 'f' | 'a'<<8 | 'l'<<16 | 's'<<24:
			if i+5 <= len(b) && b[i+4] == 'e' {
				return i + 5
			}
		}
	}
	return scanErrParse
}

// The structural rules of RFC 8259 §2 and §4 that every reader of objects
// shares: Peek's object levels, the skipper and LookupPath/LookupMembers.
// A member is a name (the string rule: plainString, then scanStringSlow),
// colon and a value; after a value, sep reads ',' or the closing bracket.
// RFC 8259 allows whitespace on both sides of each structural character;
// colon and sep take the whitespace before it, and the reader of the next
// token (name or value) the whitespace after it, since that reader looks at
// the byte anyway: in compact JSON no rule then spends an extra compare on
// whitespace that is not there. Both rules inline (go build -gcflags=-m).

// colon reads the name separator of the member rule, `ws :`, after a
// member's name: i is just past the name's closing quote. It returns the
// index just past the ':' or scanErrParse.
func colon(b []byte, i int) int {
	if uint(i) < uint(len(b)) && b[i] == ':' {
		return i + 1 // compact
	}
	for uint(i) < uint(len(b)) {
		c := b[i]
		i++
		if c == ':' {
			return i
		}
		if c > ' ' || !isWS[c] {
			break
		}
	}
	return scanErrParse
}

// sep reads the separator rule after a member or element value ending at
// b[i-1]: `ws ,` before the next one, or `ws` and the closing bracket. It
// returns the index just past the byte it found and that byte: ',' or
// anything else. Only the caller knows whether '}' or ']' closes the
// container it is in, so it checks c: a byte that is neither ',' nor that
// bracket, and the end of the input (c == 0), are syntax errors.
func sep(b []byte, i int) (int, byte) {
	if uint(i) < uint(len(b)) && b[i] > ' ' {
		return i + 1, b[i] // compact
	}
	for uint(i) < uint(len(b)) {
		c := b[i]
		i++
		if c > ' ' || !isWS[c] {
			return i, c
		}
	}
	return scanErrParse, 0
}

// stackInline is how many nesting levels the skipper tracks without a heap
// allocation (DefaultMaxDepth fits).
const stackInline = 256

// skipper validates and skips whole JSON values without recursion. The kind
// of each open container (object or array) is one bit of a bit stack: skip
// keeps the word of the 64 innermost levels in a register and stores a word
// here only when the nesting crosses a multiple of 64 levels.
type skipper struct {
	max  int
	bits [stackInline / 64]uint64
	deep []uint64 // words past stackInline levels; allocated only when MaxDepth > 256 and reached
}

// save stores word w of the bit stack (levels 64w to 64w+63 counted from
// the value skip started at). It is out of line: skip's loop stays free of
// calls on its usual paths.
//
//go:noinline
func (s *skipper) save(w int, x uint64) {
	if w < len(s.bits) {
		s.bits[w] = x
		return
	}
	w -= len(s.bits)
	for w >= len(s.deep) {
		s.deep = append(s.deep, 0)
	}
	s.deep[w] = x
}

// load returns word w of the bit stack, as save stored it.
//
//go:noinline
func (s *skipper) load(w int) uint64 {
	if w < len(s.bits) {
		return s.bits[w]
	}
	return s.deep[w-len(s.bits)]
}

// skip validates the JSON value starting at b[i] (whitespace before it is
// skipped) that sits inside containers nested depth deep, and returns the
// index just past it. A container opened at depth d+1 > s.max fails with
// scanErrDeep.
//
// It is a state machine of three states (a value, what follows a value, a
// member), written with goto so that each state's code appears once and no
// state variable is tested on the way. inObj is the kind of the innermost
// open container, and stack the innermost word of the bit stack: bit p&63
// is set when the container p+1 levels below the value is an object.
func (s *skipper) skip(b []byte, i, depth int) int {
	base := depth
	inObj := false
	var stack uint64
	var c byte

value: // A value is expected at b[i].
	if uint(i) >= uint(len(b)) {
		return scanErrParse
	}
	switch c = b[i]; c {
	case '"':
		if e := plainString(b, i+1); e >= 0 {
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
		p := depth - base - 1
		if p&63 == 0 && p != 0 {
			s.save(p>>6-1, stack)
		}
		if inObj {
			stack |= 1 << (p & 63)
		} else {
			stack &^= 1 << (p & 63)
		}
		// Its first member or element follows, unless it is empty: then
		// the closing bracket is read as after a value.
		if i = skipWS(b, i+1); uint(i) < uint(len(b)) && (b[i] == '}' || b[i] == ']') {
			break
		}
		if inObj {
			goto member
		}
		goto value
	case 't', 'f', 'n':
		if i = scanLiteral(b, i); i < 0 {
			return i
		}
	default:
		if e := plainNumber(b, i); e >= 0 {
			i = e
			break
		}
		if c != '-' && c-'0' > 9 {
			if isWS[c] {
				i = skipWS(b, i)
				goto value
			}
			return scanErrParse
		}
		if i, _ = scanNumber(b, i); i < 0 {
			return i
		}
	}

next: // A value ended just before b[i]: move on, or close a container.
	if depth == base {
		return i
	}
	if i, c = sep(b, i); c == ',' {
		if inObj {
			goto member
		}
		goto value
	}
	if c != '}' && c != ']' || (c == '}') != inObj {
		return scanErrParse
	}
	depth--
	if p := depth - base - 1; p >= 0 {
		if p&63 == 63 {
			stack = s.load(p >> 6)
		}
		inObj = stack>>(p&63)&1 != 0
	}
	goto next

member: // A member: its name, then colon; its value follows.
	if uint(i) >= uint(len(b)) || b[i] != '"' {
		if i = skipWS(b, i); uint(i) >= uint(len(b)) || b[i] != '"' {
			return scanErrParse
		}
	}
	if e := plainString(b, i+1); e >= 0 {
		i = e
	} else if i, _ = scanStringSlow(b, ^e, 0); i < 0 {
		return i
	}
	if i = colon(b, i); i < 0 {
		return i
	}
	goto value
}
