package codec

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// headerTable is EXAMPLES.md §2c: body value (as a Go string) → header value
// (B64-01, B64-02, B64-03, B64-04, B64-07; PARAM-06 for the non-strings).
var headerTable = []struct {
	body, header string
	encoded      bool
}{
	{"us-west1", "us-west1", false},
	{"us west 1", "us west 1", false},
	{" us-west1", "=?base64?IHVzLXdlc3Qx?=", true},
	{"us-west1 ", "=?base64?dXMtd2VzdDEg?=", true},
	{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?=", true},
	{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?=", true},
	{"a\tb", "=?base64?YQli?=", true},
	{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", true},
	{"", "", false},
	{"42", "42", false},
	{"-7", "-7", false},
	{"true", "true", false},
	{"false", "false", false},
	{"=?BASE64?SGk=?=", "=?BASE64?SGk=?=", false},
	// §2b
	{"Zürich", "=?base64?WsO8cmljaA==?=", true},
}

// TestHeaderTableEncode: client direction of every §2c row.
func TestHeaderTableEncode(t *testing.T) {
	for i, c := range headerTable {
		if got := HeaderValueNeedsEncoding([]byte(c.body)); got != c.encoded {
			t.Errorf("#%d HeaderValueNeedsEncoding(%q) = %v", i, c.body, got)
		}
		if got := string(AppendHeaderValue(nil, []byte(c.body))); got != c.header {
			t.Errorf("#%d AppendHeaderValue(%q) = %q, want %q", i, c.body, got, c.header)
		}
	}
}

// TestHeaderTableDecode: server direction of every §2c row (B64-05).
func TestHeaderTableDecode(t *testing.T) {
	for i, c := range headerTable {
		var stack [64]byte
		got, err := DecodeHeaderValue(stack[:0], []byte(c.header))
		if err != nil || string(got) != c.body {
			t.Errorf("#%d DecodeHeaderValue(%q) = %q, %v; want %q", i, c.header, got, err, c.body)
		}
	}
}

// TestDecodeHeaderValueRejects: malformed sentinel payloads → 400 + -32020
// (B64-06); missing markers → literal.
func TestDecodeHeaderValueRejects(t *testing.T) {
	bad := []string{
		"=?base64?SGVsbG8?=",     // §2c: bad padding (length not a multiple of 4)
		"=?base64?SGVs!!!bG8=?=", // §2c: bad alphabet
		"=?base64?SGVsbG8==?=",   // wrong padding amount
		"=?base64?SGk==?=",       // 5 chars
		"=?base64?SGl=?=",        // non-canonical trailing bits (SGk= is canonical)
		"=?base64?SR==?=",        // non-canonical trailing bits (SQ== is canonical)
		"=?base64?S===?=",        // too much padding
		"=?base64?====?=",
		"=?base64?SG=k?=", // padding in the middle
		"=?base64?SGk=SGk=?=",
		"=?base64?SGVs\nbG8=?=", // encoding/base64 would skip the newline; we do not
		"=?base64?SGVs\rbG8=?=",
		"=?base64? SGk=?=",
		"=?base64?SGVsbG8-?=",  // URL alphabet
		"=?base64?SGVsbG8_?=",  // URL alphabet
		"=?base64?/w==?=",      // decodes to 0xFF: not UTF-8
		"=?base64?7aCA?=",      // decodes to an encoded surrogate: not UTF-8
		"=?base64?=?base64??=", // a sentinel inside a sentinel: '=' and '?' are not Base64
	}
	for i, v := range bad {
		dst := []byte("keep")
		got, err := DecodeHeaderValue(dst, []byte(v))
		if err != ErrBadHeaderEncoding {
			t.Errorf("#%d %q: err = %v, got %q", i, v, err, got)
		}
		if string(got) != "keep" {
			t.Errorf("#%d %q: dst modified: %q", i, v, got)
		}
		var e *Error
		if err != nil && (!asError(err, &e) || e.HTTPStatus() != 400 || e.Code != CodeHeaderMismatch) {
			t.Errorf("#%d: wrong error %v", i, err)
		}
	}
	literal := []string{
		"SGVsbG8=",          // no prefix
		"=?base64?SGVsbG8=", // no suffix
		"=?BASE64?SGk=?=",   // B64-04: markers are case-sensitive
		"=?Base64?SGk=?=",
		"=?base64?=",       // 10 bytes: markers would overlap
		"=?base64?",        // prefix only
		"?=",               // suffix only
		" =?base64?SGk=?=", // OWS must be trimmed by the HTTP layer first
		"",
	}
	for i, v := range literal {
		got, err := DecodeHeaderValue(nil, []byte(v))
		if err != nil || string(got) != v {
			t.Errorf("#%d literal %q: got %q, %v", i, v, got, err)
		}
	}
	// The shortest sentinel has an empty payload.
	if got, err := DecodeHeaderValue([]byte("x"), []byte("=?base64??=")); err != nil || string(got) != "x" {
		t.Errorf("empty payload: %q %v", got, err)
	}
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

// TestDecodeHeaderValueAppends: the decoded bytes are appended to dst.
func TestDecodeHeaderValueAppends(t *testing.T) {
	got, err := DecodeHeaderValue([]byte("prefix:"), []byte("=?base64?WsO8cmljaA==?="))
	if err != nil || string(got) != "prefix:Zürich" {
		t.Fatalf("%q %v", got, err)
	}
}

// TestHeaderRoundTripAgainstStdlib: every byte string of length 0..5 over a
// small alphabet survives AppendHeaderValue → DecodeHeaderValue, and the
// Base64 we emit is what encoding/base64 emits.
func TestHeaderRoundTripAgainstStdlib(t *testing.T) {
	alphabet := []byte{'a', ' ', '\t', 0xc3, 0xbc, '=', '?', 0x7f}
	var rec func(prefix []byte)
	rec = func(v []byte) {
		enc := AppendHeaderValue(nil, v)
		dec, err := DecodeHeaderValue(nil, enc)
		valid := isValidUTF8(v)
		switch {
		case valid && (err != nil || !bytes.Equal(dec, v)):
			t.Fatalf("%q → %q → %q, %v", v, enc, dec, err)
		case !valid && err == nil:
			t.Fatalf("invalid UTF-8 %q decoded back without error: %q", v, dec)
		}
		if HeaderValueNeedsEncoding(v) {
			want := "=?base64?" + base64.StdEncoding.EncodeToString(v) + "?="
			if string(enc) != want {
				t.Fatalf("%q: %q want %q", v, enc, want)
			}
		}
		if len(v) == 5 {
			return
		}
		for _, c := range alphabet {
			rec(append(bytes.Clone(v), c))
		}
	}
	rec(nil)
}

// TestDecodeHeaderValueSplitPoints: every prefix and suffix of every
// sentinel value is either a literal or rejected, never decoded to
// something else, and never panics.
func TestDecodeHeaderValueSplitPoints(t *testing.T) {
	for _, c := range headerTable {
		if !c.encoded {
			continue
		}
		v := []byte(c.header)
		for n := 1; n < len(v); n++ {
			for _, part := range [][]byte{bytes.Clone(v[:n]), bytes.Clone(v[n:])} {
				got, err := DecodeHeaderValue(nil, part)
				if err == nil && isSentinel(part) && string(got) == c.body {
					t.Errorf("%q: part %q decoded to the full value", c.header, part)
				}
			}
		}
	}
}

func isValidUTF8(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < 0x80 {
			i++
			continue
		}
		n := utf8SeqLen(b, i)
		if n == 0 {
			return false
		}
		i += n
	}
	return true
}
