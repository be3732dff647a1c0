package codec

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Str is a JSON string member as found in a message. Raw holds the bytes
// between the quotes, still escaped when Escaped is true; Raw aliases the
// message passed to Peek and is valid only as long as that buffer is.
// Present is false when the member is absent or is not a JSON string.
type Str struct {
	Raw     []byte
	Escaped bool
	Present bool
}

// Equal reports whether s is present and its unescaped value equals v byte
// for byte (values are case-sensitive: HDR-06). It does not allocate.
func (s Str) Equal(v []byte) bool {
	if !s.Present {
		return false
	}
	if !s.Escaped {
		return string(s.Raw) == string(v)
	}
	return equalEscaped(s.Raw, v)
}

// EqualString is Equal for a string.
func (s Str) EqualString(v string) bool {
	if !s.Present {
		return false
	}
	if !s.Escaped {
		return string(s.Raw) == v
	}
	return equalEscaped(s.Raw, v)
}

// AppendUnescaped appends the unescaped value of s to dst. Escaped lone
// UTF-16 surrogates ("\ud800") become U+FFFD, as encoding/json does.
func (s Str) AppendUnescaped(dst []byte) []byte {
	if !s.Escaped {
		return append(dst, s.Raw...)
	}
	raw := s.Raw
	for i := 0; i < len(raw); {
		j := i
		for j < len(raw) && raw[j] != '\\' {
			j++
		}
		dst = append(dst, raw[i:j]...)
		if j == len(raw) {
			break
		}
		r, n := decodeEscape(raw, j)
		dst = utf8.AppendRune(dst, r)
		i = j + n
	}
	return dst
}

// String returns the unescaped value (it allocates; keep it off hot paths).
func (s Str) String() string {
	if !s.Escaped {
		return string(s.Raw)
	}
	return string(s.AppendUnescaped(nil))
}

// decodeEscape decodes the escape sequence at raw[i] == '\\' and returns the
// rune and the number of bytes consumed. A surrogate pair is one rune; a lone
// surrogate is U+FFFD. Malformed input (only possible for a hand-made Str)
// yields U+FFFD and never panics.
func decodeEscape(raw []byte, i int) (rune, int) {
	if i+1 >= len(raw) {
		return utf8.RuneError, len(raw) - i
	}
	switch raw[i+1] {
	case '"', '\\', '/':
		return rune(raw[i+1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(raw, i+2)
		if r < 0 {
			return utf8.RuneError, 2
		}
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if r < 0xDC00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
			if r2 := hex4(raw, i+8); r2 >= 0xDC00 && r2 < 0xE000 {
				return utf16.DecodeRune(r, r2), 12
			}
		}
		return utf8.RuneError, 6
	}
	return utf8.RuneError, 2
}

// hex4 decodes four hex digits at raw[i:], or returns -1.
func hex4(raw []byte, i int) rune {
	if i+4 > len(raw) {
		return -1
	}
	a, b, c, d := hexVal[raw[i]], hexVal[raw[i+1]], hexVal[raw[i+2]], hexVal[raw[i+3]]
	if a|b|c|d == 0xff {
		return -1
	}
	return rune(a)<<12 | rune(b)<<8 | rune(c)<<4 | rune(d)
}

// equalEscaped compares the unescaped value of raw with v without allocating.
func equalEscaped[T string | []byte](raw []byte, v T) bool {
	j := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if j >= len(v) || v[j] != c {
				return false
			}
			i++
			j++
			continue
		}
		r, n := decodeEscape(raw, i)
		i += n
		var buf [utf8.UTFMax]byte
		m := utf8.EncodeRune(buf[:], r)
		if len(v)-j < m {
			return false
		}
		for k := 0; k < m; k++ {
			if v[j+k] != buf[k] {
				return false
			}
		}
		j += m
	}
	return j == len(v)
}

// unescapeBounded unescapes raw into dst and reports false when the result
// does not fit (the caller then knows the value is longer than len(dst)).
func unescapeBounded(dst []byte, raw []byte) (int, bool) {
	n := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if n >= len(dst) {
				return n, false
			}
			dst[n] = c
			n++
			i++
			continue
		}
		r, k := decodeEscape(raw, i)
		i += k
		if len(dst)-n < utf8.RuneLen(r) {
			return n, false
		}
		n += utf8.EncodeRune(dst[n:], r)
	}
	return n, true
}
