package codec

import (
	"encoding/base64"
	"slices"
	"unicode/utf8"
)

// Mirrored header value codec, TRANSPORTS.md §4.6 (B64-01..07): values that
// are not plain-safe travel as "=?base64?" + Base64(UTF-8) + "?=".

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
	// b64MinLen: prefix and suffix must not overlap (B64-06 REC).
	b64MinLen = len(b64Prefix) + len(b64Suffix)
)

// ErrBadHeaderEncoding: a sentinel-form header value whose payload is not
// strict padded standard Base64 of valid UTF-8 (B64-06). HTTP 400.
var ErrBadHeaderEncoding = &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: malformed Base64 header value"}

// b64Val maps the standard alphabet (RFC 4648 §4) to 0..63; 0xff otherwise,
// '=' included.
var b64Val = func() (t [256]byte) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	return
}()

// isSentinel reports whether v has the exact lowercase sentinel markers,
// non-overlapping (B64-04, B64-06).
func isSentinel(v []byte) bool {
	return len(v) >= b64MinLen && string(v[:len(b64Prefix)]) == b64Prefix && string(v[len(v)-len(b64Suffix):]) == b64Suffix
}

// DecodeHeaderValue decodes a mirrored header value (B64-05). When v has the
// exact form "=?base64?" + X + "?=" (lowercase markers, len(v) >= 11), X is
// decoded as standard Base64 with padding required and strictly checked
// (length a multiple of 4, alphabet, '=' only as final padding, zero
// trailing bits; no whitespace or line breaks) and appended to dst, and the
// extended dst is returned. X must decode to valid UTF-8. Any failure
// returns dst unchanged and ErrBadHeaderEncoding (400 + -32020, B64-06).
//
// Any other v (no prefix, no suffix, "=?BASE64?…?=", shorter than 11 bytes)
// is a literal and is returned as is, not copied into dst. Optional
// whitespace around the field value (HDR-07) must be trimmed by the HTTP
// layer before the call. It does not allocate when dst has room for the
// decoded bytes (3/4 of len(X)): pass a stack buffer.
func DecodeHeaderValue(dst, v []byte) ([]byte, error) {
	if !isSentinel(v) {
		return v, nil
	}
	src := v[len(b64Prefix) : len(v)-len(b64Suffix)]
	if len(src)%4 != 0 {
		return dst, ErrBadHeaderEncoding
	}
	if len(src) == 0 {
		return dst, nil
	}
	pad := 0
	if src[len(src)-1] == '=' {
		pad = 1
		if src[len(src)-2] == '=' {
			pad = 2
		}
	}
	start := len(dst)
	out := slices.Grow(dst, len(src)/4*3-pad)
	last := len(src) - 4
	for i := 0; i < last; i += 4 {
		a, b, c, d := b64Val[src[i]], b64Val[src[i+1]], b64Val[src[i+2]], b64Val[src[i+3]]
		if a|b|c|d == 0xff {
			return dst, ErrBadHeaderEncoding
		}
		w := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		out = append(out, byte(w>>16), byte(w>>8), byte(w))
	}
	a, b := b64Val[src[last]], b64Val[src[last+1]]
	if a|b == 0xff {
		return dst, ErrBadHeaderEncoding
	}
	switch pad {
	case 2:
		if b&0x0f != 0 { // non-canonical trailing bits
			return dst, ErrBadHeaderEncoding
		}
		out = append(out, a<<2|b>>4)
	case 1:
		c := b64Val[src[last+2]]
		if c == 0xff || c&0x03 != 0 {
			return dst, ErrBadHeaderEncoding
		}
		out = append(out, a<<2|b>>4, b<<4|c>>2)
	default:
		c, d := b64Val[src[last+2]], b64Val[src[last+3]]
		if c|d == 0xff {
			return dst, ErrBadHeaderEncoding
		}
		out = append(out, a<<2|b>>4, b<<4|c>>2, c<<6|d)
	}
	if !utf8.Valid(out[start:]) {
		return dst, ErrBadHeaderEncoding
	}
	return out, nil
}

// HeaderValueNeedsEncoding reports whether a client must send v in the
// Base64 sentinel form: a byte outside printable ASCII 0x20–0x7E (non-ASCII,
// control characters, TAB, CR, LF, DEL), a leading or trailing space, or a
// plain value that itself looks like a sentinel (B64-01, B64-02, B64-03).
// The empty value is plain (B64-07).
func HeaderValueNeedsEncoding(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == ' ' || v[len(v)-1] == ' ' {
		return true
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e {
			return true
		}
	}
	return isSentinel(v)
}

// AppendHeaderValue appends the header form of the body value v (client
// side, B64-01..03): v itself when plain-safe, else "=?base64?" +
// Base64(v) + "?=". v should be valid UTF-8 (a JSON string value is);
// DecodeHeaderValue rejects the encoding of anything else.
func AppendHeaderValue(dst, v []byte) []byte {
	if !HeaderValueNeedsEncoding(v) {
		return append(dst, v...)
	}
	dst = append(dst, b64Prefix...)
	dst = base64.StdEncoding.AppendEncode(dst, v)
	return append(dst, b64Suffix...)
}
