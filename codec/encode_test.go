package codec

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdString is encoding/json's encoding of s without HTML escaping: the
// reference AppendString must match byte for byte.
func stdString(t testing.TB, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// TestAppendString covers A17 (invalid UTF-8 and lone surrogates from
// handler code must come out as valid UTF-8 JSON) and the escaping rules.
func TestAppendString(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"", `""`},
		{"plain ascii longer than eight bytes", `"plain ascii longer than eight bytes"`},
		{`quote " and backslash \`, `"quote \" and backslash \\"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"<>&", `"<>&"`}, // no HTML escaping
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"Zürich 世界 😀", `"Zürich 世界 😀"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xff\xfe", `"\ufffd\ufffd"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`}, // UTF-8-encoded lone surrogate U+D800 (A17)
		{"\xe4\xb8", `"\ufffd\ufffd"`},           // truncated sequence
		{"\xc0\xaf", `"\ufffd\ufffd"`},           // overlong '/'
		{"\xf4\x90\x80\x80", `"\ufffd\ufffd\ufffd\ufffd"`},
		{"12345678\xff12345678", `"12345678\ufffd12345678"`},
	}
	for i, c := range cases {
		got := string(AppendString(nil, c.in))
		if got != c.want {
			t.Errorf("#%d AppendString(%q) = %s, want %s", i, c.in, got, c.want)
		}
		if ref := stdString(t, c.in); got != ref {
			t.Errorf("#%d differs from encoding/json: %s vs %s", i, got, ref)
		}
		if b := string(AppendStringBytes([]byte("x"), []byte(c.in))); b != "x"+got {
			t.Errorf("#%d AppendStringBytes = %s", i, b)
		}
		if !utf8.ValidString(got) || !json.Valid([]byte(got)) {
			t.Errorf("#%d output not valid UTF-8 JSON: %q", i, got)
		}
	}
	// Every single byte value, alone and inside ASCII runs of each alignment.
	for c := 0; c < 256; c++ {
		for pad := 0; pad < 9; pad++ {
			in := strings.Repeat("a", pad) + string([]byte{byte(c)}) + strings.Repeat("b", 9-pad)
			if got, ref := string(AppendString(nil, in)), stdString(t, in); got != ref {
				t.Fatalf("byte %#x pad %d: %s vs %s", c, pad, got, ref)
			}
		}
	}
}

// TestAppendStringLoneSurrogateEscape: a JSON "\ud800" read by Peek and
// re-encoded comes out as valid UTF-8 (A17).
func TestAppendStringLoneSurrogateEscape(t *testing.T) {
	var env Envelope
	if err := Peek([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\ud800"}}`), &env); err != nil {
		t.Fatal(err)
	}
	out := AppendString(nil, env.Name.String())
	if string(out) != "\"\uFFFD\"" || !utf8.Valid(out) {
		t.Fatalf("got %q", out)
	}
}

func TestAppendFloat(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.25, 0.75, 10, 100, 1.5, -7.125, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1e22,
		123456789012345, 1e15, 1e15 + 1, 9007199254740993, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, 0.1, 1.0 / 3, 2.5e-8}
	for i, v := range vals {
		ref, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendFloat(nil, v)); got != string(ref) {
			t.Errorf("#%d AppendFloat(%v) = %s, want %s", i, v, got, ref)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(AppendFloat(nil, v)); got != "null" {
			t.Errorf("AppendFloat(%v) = %s, want null", v, got)
		}
	}
}

const serverInfoMeta = `{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}`

// TestEncodersMatchExamples rebuilds the EXAMPLES.md server messages byte
// for byte (GEN-05, GEN-06, GEN-10, PROG, SUB-10).
func TestEncodersMatchExamples(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"§2 tools/call response", AppendResponse(nil, []byte("2"), AppendTextResult(nil, []byte("1 row"), false, []byte(serverInfoMeta))), vecToolsCallResp},
		{"§5 header mismatch", AppendErrorResponse(nil, []byte("6"), NewError(CodeHeaderMismatch, "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'")), vecMismatchResp},
		{"§6 unsupported version", AppendErrorResponse(nil, []byte("8"), &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: []byte(`{"supported":["2026-07-28"],"requested":"2099-01-01"}`)}), vecUnsupportedResp},
		{"§9c probe error", AppendErrorResponse(nil, []byte(`"probe-1"`), &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: []byte(`{"supported":["2026-07-28"],"requested":"2027-01-01"}`)}), vecProbeResp},
		{"§9d parse error without id (GEN-05)", AppendErrorResponse(nil, nil, ErrParse), vecParseErrResp},
		{"§7 method not found", AppendErrorResponse(nil, []byte("9"), NewError(CodeMethodNotFound, "Method not found: ping")), `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found: ping"}}`},
		{"§7 missing capability", AppendErrorResponse(nil, []byte("11"), &Error{Code: CodeMissingRequiredClientCapability, Message: "Server requires the elicitation capability for this request", Data: []byte(`{"requiredCapabilities":{"elicitation":{}}}`)}),
			`{"jsonrpc":"2.0","id":11,"error":{"code":-32021,"message":"Server requires the elicitation capability for this request","data":{"requiredCapabilities":{"elicitation":{}}}}}`},
		{"§3 progress 1", AppendProgress(nil, []byte(`"tok-3"`), 0.25, 1, true, "scanning"), vecProgress1},
		{"§3 progress 2", AppendProgress(nil, []byte(`"tok-3"`), 0.75, 1, true, ""), vecProgress2},
		{"§9a numeric token", AppendProgress(nil, []byte(`7`), 10, 100, true, ""), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":10,"total":100}}`},
		{"progress without total", AppendProgress(nil, []byte(`7`), 3, 0, false, "a\"b"), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3,"message":"a\"b"}}`},
		{"§3 final response without isError", AppendResponse(nil, []byte("3"), []byte(`{"resultType":"complete","content":[{"type":"text","text":"1000 rows"}],"_meta":`+serverInfoMeta+`}`)), vecProgressResp},
		{"§8 list_changed", AppendNotification(nil, "notifications/tools/list_changed", []byte(`{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}`)),
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}`},
		{"notification without params", AppendNotification(nil, "notifications/x", nil), `{"jsonrpc":"2.0","method":"notifications/x"}`},
		{"§8 listen completion (SUB-10)", AppendResponse(nil, []byte(`"listen-1"`), []byte(`{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1","io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}`)), vecListenResp},
		{"text result isError, no meta", AppendTextResult(nil, []byte("boom\n\xff"), true, nil), `{"resultType":"complete","content":[{"type":"text","text":"boom\n\ufffd"}],"isError":true}`},
	}
	for i, c := range cases {
		if string(c.got) != c.want {
			t.Errorf("#%d %s:\n got %s\nwant %s", i, c.name, c.got, c.want)
		}
		if !json.Valid(c.got) || !utf8.Valid(c.got) {
			t.Errorf("#%d %s: not valid UTF-8 JSON", i, c.name)
		}
	}
}

// TestEncodersAppend: encoders extend dst and never touch its existing bytes.
func TestEncodersAppend(t *testing.T) {
	prefix := []byte("data: ")
	for i, f := range []func([]byte) []byte{
		func(d []byte) []byte { return AppendResponse(d, []byte("1"), []byte("{}")) },
		func(d []byte) []byte { return AppendErrorResponse(d, []byte("1"), ErrBadID) },
		func(d []byte) []byte { return AppendNotification(d, "m", nil) },
		func(d []byte) []byte { return AppendProgress(d, []byte("1"), 1, 2, true, "x") },
		func(d []byte) []byte { return AppendTextResult(d, []byte("t"), false, nil) },
		func(d []byte) []byte { return AppendString(d, "s") },
		func(d []byte) []byte { return AppendFloat(d, 1.5) },
	} {
		dst := append(make([]byte, 0, 256), prefix...)
		out := f(dst)
		if !bytes.HasPrefix(out, prefix) || !json.Valid(out[len(prefix):]) {
			t.Errorf("#%d: %q", i, out)
		}
	}
}

// TestEncodedErrorsPeekBack: every sentinel's error response is a valid
// response that Peek reads back with the same id (HVAL-03).
func TestEncodedErrorsPeekBack(t *testing.T) {
	for i, e := range []*Error{ErrParse, ErrInvalidUTF8, ErrBatch, ErrNotObject, ErrBadVersion, ErrBadID, ErrNoMethod,
		ErrBadMethod, ErrBadParams, ErrDuplicateKey, ErrTooDeep, ErrBadResponse, ErrBadHeaderEncoding} {
		for _, id := range [][]byte{nil, []byte("7"), []byte(`"a\"b"`)} {
			out := AppendErrorResponse(nil, id, e)
			var env Envelope
			if err := Peek(out, &env); err != nil {
				t.Fatalf("#%d %s: %v", i, out, err)
			}
			if env.Kind != KindResponse || !env.HasError || !bytes.Equal(env.ID, id) {
				t.Errorf("#%d %s: %+v", i, out, viewOf(&env))
			}
		}
	}
}

// TestAppendStringRoom: a plain string of every length around the
// two-word copy (8 to 16 bytes), appended into a dst with room, comes out
// quoted and whole, and the bytes past it are untouched.
func TestAppendStringRoom(t *testing.T) {
	const src = "abcdefghijklmnopqrstuvwxyz"
	for n := 0; n <= len(src); n++ {
		room := bytes.Repeat([]byte{'#'}, 64)
		got := AppendStringBytes(room[:5], []byte(src[:n]))
		if want := "#####\"" + src[:n] + "\""; string(got) != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
		if rest := room[len(got):]; !bytes.Equal(rest, bytes.Repeat([]byte{'#'}, len(rest))) {
			t.Errorf("%d: wrote past the string: %q", n, rest)
		}
	}
}
