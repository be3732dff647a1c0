package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets, one per decoder (STYLE). Seeds: the f.Add calls below plus
// testdata/fuzz/<Target>/; crashers found locally are kept there.
//
//	go test -run='^$' -fuzz='^FuzzPeek$' -fuzztime=60s ./codec/

// FuzzPeek: Peek never panics; its syntax verdict equals encoding/json's
// json.Valid && utf8.Valid (differential, GEN-02); when it accepts, the
// recorded fields equal what encoding/json decodes.
func FuzzPeek(f *testing.F) {
	for _, s := range []string{vecDiscover, vecToolsCall, vecToolsCallZurich, vecResourcesRead, vecToolsCallProgress,
		vecProgress1, vecCancelled, vecMismatchResp, vecUnsupportedResp, vecNoMeta, vecLegacyInit, vecListen, vecListenResp,
		vecStdioCall, vecProbe, vecTruncatedLine, vecParseErrResp, vecMRTR2,
		`hello`, `{"jsonrpc":"2.0",`, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\xfeb\"}",
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`, `{"jsonrpc":"2.0","id":{},"method":"m"}`, `{"jsonrpc":"1.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, `{"jsonrpc":"2.0","id":1,"method":"m","paramſ":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"\ud800\u0041\ud83d\ude00"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":` + strings.Repeat("[", 200) + `}}`,
		` {"jsonrpc" : "2\u002e0" , "id" : -0 , "method" : "m" } `, `{"jsonrpc":"2.0","id":1e2,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"b":"x","c":true,"d":null}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":01,"b":"x"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var env Envelope
		err := Peek(msg, &env)
		if err == ErrTooDeep {
			return // encoding/json's own limit is 10000; not comparable
		}
		syntaxOK := json.Valid(msg) && utf8.Valid(msg)
		isSyntaxErr := err == ErrParse || err == ErrInvalidUTF8
		if syntaxOK == isSyntaxErr {
			t.Fatalf("syntax verdict differs: Peek %v, json.Valid&&utf8.Valid %v: %q", err, syntaxOK, msg)
		}
		if isSyntaxErr && (env.ID != nil || env.Kind != KindInvalid) {
			t.Fatalf("envelope not reset on %v", err)
		}
		if err != nil {
			if env.ID != nil && env.IDKind != IDString && env.IDKind != IDNumber {
				t.Fatalf("invalid id kept: %q", env.ID)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(msg))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("Peek accepted, encoding/json: %v", err)
		}
		if m["jsonrpc"] != "2.0" {
			t.Fatalf("jsonrpc %v", m["jsonrpc"])
		}
		checkStr(t, "method", env.Method, m, "method")
		checkID(t, "id", env.ID, m["id"], hasKey(m, "id"))
		switch env.Kind {
		case KindRequest:
			if env.IDKind != IDString && env.IDKind != IDNumber {
				t.Fatalf("request with id kind %v", env.IDKind)
			}
		case KindNotification:
			if hasKey(m, "id") {
				t.Fatal("notification with id")
			}
		case KindResponse:
			if hasKey(m, "method") || (hasKey(m, "result") == hasKey(m, "error")) {
				t.Fatalf("bad response %v", m)
			}
		default:
			t.Fatal("accepted with KindInvalid")
		}
		params, _ := m["params"].(map[string]any)
		if (env.Params != nil) != (params != nil) {
			t.Fatalf("params: %q vs %v", env.Params, m["params"])
		}
		if params == nil {
			return
		}
		checkStr(t, "name", env.Name, params, "name")
		checkStr(t, "uri", env.URI, params, "uri")
		checkRaw(t, "arguments", env.Arguments, params["arguments"], hasKey(params, "arguments"))
		if v, ok := params["requestId"]; ok && env.RequestID != nil {
			checkID(t, "requestId", env.RequestID, v, true)
		}
		meta, _ := params["_meta"].(map[string]any)
		if (env.Meta != nil) != (meta != nil) {
			t.Fatalf("_meta: %q vs %v", env.Meta, params["_meta"])
		}
		if meta == nil {
			return
		}
		checkStr(t, "protocolVersion", env.ProtocolVersion, meta, MetaProtocolVersion)
		checkStr(t, "logLevel", env.LogLevel, meta, MetaLogLevel)
		if caps, ok := meta[MetaClientCapabilities].(map[string]any); ok {
			checkRaw(t, "clientCapabilities", env.ClientCapabilities, caps, true)
		} else if env.ClientCapabilities != nil {
			t.Fatal("clientCapabilities recorded for a non-object")
		}
		if info, ok := meta[MetaClientInfo].(map[string]any); ok {
			checkRaw(t, "clientInfo", env.ClientInfo, info, true)
		} else if env.ClientInfo != nil {
			t.Fatal("clientInfo recorded for a non-object")
		}
		if v, ok := meta[MetaProgressToken]; ok && env.ProgressToken != nil {
			checkID(t, "progressToken", env.ProgressToken, v, true)
		}
	})
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func checkStr(t *testing.T, what string, s Str, m map[string]any, key string) {
	t.Helper()
	v, isStr := m[key].(string)
	if s.Present != isStr || (isStr && s.String() != v) || (isStr && !s.EqualString(v)) {
		t.Fatalf("%s: Peek %+v (%q), encoding/json %#v", what, s, s.String(), m[key])
	}
}

func checkID(t *testing.T, what string, raw []byte, v any, present bool) {
	t.Helper()
	switch v := v.(type) {
	case string:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s != v {
			t.Fatalf("%s: %q vs %q", what, raw, v)
		}
	case json.Number:
		if string(raw) != v.String() {
			t.Fatalf("%s: %q vs %v", what, raw, v)
		}
	default:
		if raw != nil && present {
			t.Fatalf("%s: recorded %q for %#v", what, raw, v)
		}
	}
}

func checkRaw(t *testing.T, what string, raw []byte, v any, present bool) {
	t.Helper()
	if (raw != nil) != present {
		t.Fatalf("%s: %q vs present=%v", what, raw, present)
	}
	if raw == nil {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var got any
	if err := dec.Decode(&got); err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("%s: span %q decodes to %#v, want %#v (%v)", what, raw, got, v, err)
	}
}

// FuzzDecodeHeaderValue: never panics; a literal comes back unchanged;
// a decoded sentinel is exactly what strict stdlib Base64 accepts and
// re-encodes canonically; any body value survives AppendHeaderValue →
// DecodeHeaderValue (B64-01..06).
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, c := range headerTable {
		f.Add([]byte(c.header))
		f.Add([]byte(c.body))
	}
	for _, s := range []string{"=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?SGl=?=", "=?base64?SGVs\nbG8=?=", "=?base64??=", "=?base64?=", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		var stack [64]byte
		got, err := DecodeHeaderValue(stack[:0], v)
		if !isSentinel(v) {
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("literal %q: %q %v", v, got, err)
			}
		} else {
			payload := v[len(b64Prefix) : len(v)-len(b64Suffix)]
			ref, refErr := base64.StdEncoding.Strict().DecodeString(string(payload))
			if bytes.ContainsAny(payload, "\r\n") {
				refErr = base64.CorruptInputError(0) // the stdlib skips CR/LF; the header codec does not
			}
			if refErr == nil && !utf8.Valid(ref) {
				refErr = base64.CorruptInputError(0)
			}
			if (err == nil) != (refErr == nil) || (err == nil && !bytes.Equal(got, ref)) {
				t.Fatalf("%q: got %q %v, stdlib %q %v", v, got, err, ref, refErr)
			}
			if err == nil && base64.StdEncoding.EncodeToString(got) != string(payload) {
				t.Fatalf("%q: accepted a non-canonical encoding", v)
			}
			if err != nil && err != ErrBadHeaderEncoding {
				t.Fatalf("error %v", err)
			}
		}
		// Client side: v as a body value.
		enc := AppendHeaderValue(nil, v)
		if HeaderValueNeedsEncoding(v) != !bytes.Equal(enc, v) {
			t.Fatalf("%q: needs-encoding verdict disagrees with %q", v, enc)
		}
		for _, c := range enc {
			if c < 0x20 || c > 0x7e {
				t.Fatalf("%q: header value %q is not plain ASCII", v, enc)
			}
		}
		back, err := DecodeHeaderValue(nil, enc)
		if utf8.Valid(v) {
			if err != nil || !bytes.Equal(back, v) {
				t.Fatalf("round trip %q → %q → %q, %v", v, enc, back, err)
			}
		} else if err == nil {
			t.Fatalf("invalid UTF-8 %q round-tripped without error", v)
		}
	})
}

// FuzzAppendString: the output is valid UTF-8 and valid JSON, equals
// encoding/json's encoding byte for byte, and decodes back to the input with
// each invalid byte replaced by U+FFFD (A17).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "Zürich 世界 😀", "\xff\xfe", "\xed\xa0\x80", "a\"b\\c\n\t\x00\x1f\x7f",
		"\u2028\u2029", "<script>&", "12345678\xe4\xb8", strings.Repeat("x", 70) + "\xc3",
		// Around the plain fast path's overlapping last word: a byte to
		// escape in it, or just before it.
		"1234567\"", "12345678\n", "123456789\\", "1234567\"9", "123456789012345\x01", "hello world\u2028",
		"abcdefghij\x7f", "abcdefgh\xc3\xa9", "abcdefghi\xff", "hello world", "12345678", "1234567890123456", "12345678901234567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString([]byte("p"), s)[1:]
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("%q → invalid %q", s, out)
		}
		if ref := stdString(t, s); string(out) != ref {
			t.Fatalf("%q: %s, encoding/json %s", s, out, ref)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r) // RuneError for each invalid byte
			i += n
		}
		if back != want.String() {
			t.Fatalf("%q decodes back to %q, want %q", s, back, want.String())
		}
		if b := AppendStringBytes(nil, []byte(s)); !bytes.Equal(b, out) {
			t.Fatalf("AppendStringBytes differs: %q vs %q", b, out)
		}
		// Into a dst with room (the copy without a grow: words for 8 to 16
		// bytes), whose bytes past the string must stay as they were.
		room := bytes.Repeat([]byte{'#'}, 6*len(s)+40) // \ufffd per invalid byte at most
		if b := AppendString(room[:3], s); !bytes.Equal(b[3:], out) || !bytes.Equal(room[len(b):], bytes.Repeat([]byte{'#'}, len(room)-len(b))) {
			t.Fatalf("into room: %q vs %q (room after %q)", b[3:], out, room[len(b):])
		}
	})
}

// FuzzLookupPath: never panics; whatever it returns comes from valid JSON
// and equals encoding/json's view of the same member (last one wins).
func FuzzLookupPath(f *testing.F) {
	f.Add([]byte(`{"region":"us-west1","nested":{"a":{"b":[1,2]}},"region":"eu"}`), "nested", "a")
	f.Add([]byte(`{"a":{"b":"\u00e9"}}`), "a", "b")
	f.Add([]byte(`{"a":1`), "a", "")
	f.Fuzz(func(t *testing.T, obj []byte, k1, k2 string) {
		path := []string{k1}
		if k2 != "" {
			path = append(path, k2)
		}
		raw, ok := LookupPath(obj, path...)
		if !ok {
			return
		}
		if !json.Valid(obj) || !utf8.Valid(obj) {
			t.Fatalf("found %q in invalid input %q", raw, obj)
		}
		var m map[string]any
		if json.Unmarshal(obj, &m) != nil {
			t.Fatalf("not an object: %q", obj)
		}
		var v any = m
		for _, k := range path {
			mm, isObj := v.(map[string]any)
			if !isObj {
				t.Fatalf("walked into a non-object")
			}
			v = mm[k]
		}
		var got any
		if err := json.Unmarshal(raw, &got); err != nil || !reflect.DeepEqual(got, v) {
			t.Fatalf("%q %v: %q vs %#v", obj, path, raw, v)
		}
	})
}

// FuzzScanMembers: on a valid JSON object without repeated members,
// ScanMembers counts what encoding/json decodes and finds each named
// member's value; on anything else it reports an error or no members,
// never a panic.
func FuzzScanMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"text":"a","n":1}`, ` {"a" : [1,{"text":2}] , "text":null} `, `{"te\u0078t":"x"}`, `[1]`, `{"a":1,"a":2}`, `{"a":`} {
		f.Add(s)
	}
	names := []string{"text", "n"}
	f.Fuzz(func(t *testing.T, obj string) {
		vals := make([][]byte, len(names))
		n, err := ScanMembers([]byte(obj), names, vals)
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &m) != nil || !utf8.ValidString(obj) ||
			strings.Count(obj, "[")+strings.Count(obj, "{") > MaxDepthLimit {
			return // not an object encoding/json reads, or deeper than our cap: only no panic
		}
		if err != nil {
			if errors.Is(err, ErrDuplicateKey) {
				return
			}
			t.Fatalf("%s: %v", obj, err)
		}
		if n < len(m) {
			t.Fatalf("%s: %d members, encoding/json decodes %d", obj, n, len(m))
		}
		if n > len(m) {
			return // a repeated member that is not one of names
		}
		for i, name := range names {
			want, ok := m[name]
			if ok != (vals[i] != nil) || (ok && !bytes.Equal(bytes.TrimSpace(vals[i]), bytes.TrimSpace(want))) {
				t.Fatalf("%s: %s = %q, encoding/json %q", obj, name, vals[i], want)
			}
		}
	})
}

// FuzzScanArguments: on any message, Envelope.ScanArguments after Peek
// gives exactly what ScanMembers gives on env.Arguments (count, error and
// every value span), whether Peek recorded the members or not; names are a
// fixed list plus each member name of the arguments object.
func FuzzScanArguments(f *testing.F) {
	for _, s := range []string{fixture, vecToolsCall, vecToolsCallZurich, vecStdioCall,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"b":"x","c":true,"d":null}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"text":1,"text":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a" :1 ,"b": 2, "text":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"b":2,"c":3,"d":4,"text":5},"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"b":2,"c":3,"text":4},"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"te\u0078t":"x","n":[1]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"text":"x"},"arguments":{"n":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":"text"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"text":"x"}},"params":{"arguments":{"n":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"n":1,"text":"hello w"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"b":2,"c":3,"d":4,"e":"x"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var env Envelope
		Peek(msg, &env)
		names := []string{"text", "n", "a", ""}
		if obj := env.Arguments; len(obj) > 0 && obj[0] == '{' && json.Valid(obj) {
			dec := json.NewDecoder(bytes.NewReader(obj))
			dec.Token()
			for dec.More() && len(names) < 12 {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				if s, ok := tok.(string); ok && !slicesContains(names, s) {
					names = append(names, s)
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
			}
		}
		got, want := make([][]byte, len(names)), make([][]byte, len(names))
		gn, gerr := env.ScanArguments(names, got)
		wn, werr := ScanMembers(env.Arguments, names, want)
		if gn != wn || gerr != werr {
			t.Fatalf("%q: ScanArguments %d %v, ScanMembers %d %v", env.Arguments, gn, gerr, wn, werr)
		}
		for i := range names {
			if (got[i] == nil) != (want[i] == nil) || !bytes.Equal(got[i], want[i]) ||
				(got[i] != nil && &got[i][0] != &want[i][0]) {
				t.Fatalf("%q: %q = %q, ScanMembers %q", env.Arguments, names[i], got[i], want[i])
			}
		}
	})
}

// FuzzPlainArguments: when Peek recorded the members of params.arguments
// (PlainArguments >= 0), PlainArgument gives each member's name and value
// in order, as encoding/json reads them, and they are as plain as
// PlainArguments says: names and string values ASCII 0x20-0x7f without
// quote or backslash, other values digits (no sign, fraction or exponent),
// true, false or null. The engine's typed decode trusts this.
func FuzzPlainArguments(f *testing.F) {
	for _, s := range []string{fixture, vecToolsCall, vecToolsCallZurich,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1,"b":"x","c":true,"d":null}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":-1,"b":1.5,"c":"\u0041","d":"\u00e9"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":"\u007f~ ","b":"é","c":0,"d":false}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"text":"x"},"arguments":{"n":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"n":1,"text":"hello w"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{"n":1,"text":"a\"b"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var env Envelope
		Peek(msg, &env)
		n := env.PlainArguments()
		if n < 0 {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(env.Arguments))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("%q: recorded, not an object", env.Arguments)
		}
		plain := func(b []byte) bool {
			for _, c := range b {
				if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
					return false
				}
			}
			return true
		}
		for j := 0; ; j++ {
			if !dec.More() {
				if j != n {
					t.Fatalf("%q: %d members recorded, %d there", env.Arguments, n, j)
				}
				return
			}
			if j >= n {
				t.Fatalf("%q: %d members recorded, more there", env.Arguments, n)
			}
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%q: %v", env.Arguments, err)
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("%q: %v", env.Arguments, err)
			}
			name, value := env.PlainArgument(j)
			if string(name) != tok.(string) || !bytes.Equal(value, raw) || !plain(name) {
				t.Fatalf("%q: member %d %q: %q, encoding/json %q: %q", env.Arguments, j, name, value, tok, raw)
			}
			switch c := value[0]; {
			case c == '"':
				if !plain(value[1 : len(value)-1]) {
					t.Fatalf("%q: member %d's string %q is not plain", env.Arguments, j, value)
				}
			case c == 't' || c == 'f' || c == 'n':
			default:
				for _, d := range value {
					if d < '0' || d > '9' {
						t.Fatalf("%q: member %d's number %q is not a plain integer", env.Arguments, j, value)
					}
				}
			}
		}
	})
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzKnownKey: knownKey, which compares a member name by whole words (the
// word that ends with the name's closing quote first, the bytes before the
// name masked out for a short one), agrees with a byte-by-byte compare of
// b[i:] with every recognised name+quote of the level, for any bytes and
// any index just past a quote (differential). The one difference allowed
// is a name that ends within the first 8 bytes of b: knownKey leaves it to
// classify (-1) rather than load a word before b, and may never return
// another key. TestPeekReadsInsideBuffer checks that its loads stay in b.
func FuzzKnownKey(f *testing.F) {
	for _, s := range []string{fixture, vecToolsCall, vecCancelled, `{"id":1}`, `"uri"`,
		`{"x":"io.modelcontextprotocol/clientInfo","io.modelcontextprotocol/clientInfo":{}}`,
		`{"a":1,"io.modelcontextprotocol/logLevel"`, `{"a":1,"progressToken`, `{"a":1,"argumentsX":1}`,
	} {
		for lv := range uint8(3) {
			f.Add([]byte(s), lv)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, lv uint8) {
		level := int(lv%3) + 1
		for i := 1; i <= len(b); i++ {
			if b[i-1] != '"' {
				continue
			}
			wk, we := keyUnknown, -1
			for k, kn := range keyNames {
				if kn.name != "" && kn.level == level && bytes.HasPrefix(b[i:], []byte(kn.name+`"`)) {
					wk, we = k, i+len(kn.name)+1
				}
			}
			k, e := knownKey(b, i, level)
			if (k != wk || e != we) && (e >= 0 || we >= 8) {
				t.Fatalf("knownKey(%q, %d, level %d) = %d, %d; byte compare %d, %d", b, i, level, k, e, wk, we)
			}
		}
	})
}

// FuzzPeekShape: the usual-shape readers (shape.go) and the memo change
// nothing Peek gives. On any message and depth limit, PeekWith with them
// and without them (the object loop alone) return the same error and the
// same envelope, every span at the same place in the message; with a memo
// of the message itself (its second read) and of prev, read with another
// depth limit (depth/8); the message read with prev's bytes after it in
// the buffer.
func FuzzPeekShape(f *testing.F) {
	seeds := shapeSeeds()
	for j, s := range seeds {
		for _, depth := range []int{0, 2, 3, 4, 2 + 8*5, 5 + 8*2} {
			f.Add([]byte(s), []byte(seeds[(j+depth)%len(seeds)]), depth)
		}
	}
	f.Fuzz(func(t *testing.T, msg, prev []byte, depth int) {
		o := PeekConfig{MaxDepth: depth % 8}
		// msg is read where prev's bytes follow it in the buffer, as a
		// line is with the next line behind it: no reader may look past
		// the message's end.
		buf := append(append(make([]byte, 0, len(msg)+len(prev)), msg...), prev...)
		b := buf[:len(msg):len(buf)]
		comparePeekShape(t, b, o)
		var env Envelope
		o.Memo = new(PeekMemo)
		// The memo is filled by prev read with another depth limit.
		PeekWith(prev, &env, PeekConfig{MaxDepth: depth / 8 % 8, Memo: o.Memo})
		comparePeekShape(t, b, o)
	})
}

// shapeSeeds are the standard fixture and variants that leave its shape
// at each of its members, in each way the readers decline.
func shapeSeeds() []string {
	seeds := []string{fixture, vecToolsCall, vecCancelled, vecResourcesRead, vecMismatchReq, vecDiscover}
	for _, r := range [][2]string{
		{`"id":1,`, `"id":"a1",`}, {`"id":1,`, `"id":-1,`}, {`"id":1,`, `"id":01,`}, {`"id":1,`, `"id":1.5,`},
		{`"id":1,`, `"id":null,`}, {`"id":1,`, `"id":"a\u0031",`}, {`"id":1,`, ``}, {`"id":1,`, `"id":1 ,`},
		{`"tools/call"`, `"tools\/call"`}, {`"tools/call"`, `7`}, {`"method":"tools/call",`, ``},
		{`"params":{`, `"params" : {`}, {`"params":{`, `"params":{"x":1,`}, {`}}}`, `}},"id":2}`},
		{`"name":"echo"`, `"name":"éc"`}, {`"name":"echo"`, `"name":1`}, {`"name":"echo",`, ``},
		{`{"text":"hello world"}`, `{}`}, {`{"text":"hello world"}`, `{"text":{"a":1}}`}, {`{"text":"hello world"}`, `[1]`},
		{`{"text":"hello world"}`, `{"a":1,"b":2,"c":3,"d":4,"e":5}`}, {`{"text":"hello world"}`, `{"text":"hello\nworld"}`},
		{`{"text":"hello world"}`, `{"text":"x","text":"y"}`}, {`"arguments":{"text":"hello world"},`, ``},
		{`"_meta":{`, `"_meta":{"x":1,`}, {`"_meta":{`, `"_meta" :{`}, {`"2026-07-28"`, `"2026\u002d07"`}, {`"2026-07-28"`, `20260728`},
		{`{"name":"wrk","version":"1"}`, `{}`}, {`{"name":"wrk","version":"1"}`, `{"name":{"a":"wrk"}}`}, {`{"name":"wrk","version":"1"}`, `"wrk"`},
		{`clientCapabilities":{}`, `clientCapabilities":{"roots":{"listChanged":true}}`}, {`clientCapabilities":{}`, `clientCapabilities":{"a":1}`},
		{`clientCapabilities":{}`, `clientCapabilities":[]`}, {`"progressToken":1`, `"progressToken":"p1"`}, {`"progressToken":1`, `"progressToken":-1`},
		{`"progressToken":1`, `"progressToken":{}`}, {`"progressToken":1}`, `"progressToken":1,"progressToken":2}`},
		{`"progressToken":1}`, `"progressToken":1,"io.modelcontextprotocol/logLevel":"info"}`}, {`,"progressToken":1`, ``},
		{`1}}}`, `1},"uri":"u","name":"x"},"method":"m"}`}, {`1}}}`, `1}} , "Method":"x"}`}, {`1}}}`, `1}}}}`}, {`1}}}`, `1}}`},
		{`{"jsonrpc":"2.0",`, `{"jsonrpc":"2.0" ,`}, {`{"jsonrpc":"2.0",`, `{"jsonrpc":"1.0",`}, {`{"jsonrpc":"2.0",`, `{"id":0,"jsonrpc":"2.0",`},
		{`/clientInfo"`, `/clientinfo"`},
	} {
		if !strings.Contains(fixture, r[0]) {
			panic("shapeSeeds: " + r[0])
		}
		seeds = append(seeds, strings.Replace(fixture, r[0], r[1], 1))
	}
	// params with _meta first (paramsShape's other order), and its own
	// ways out.
	mf := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"echo","arguments":{"a":1}}}`
	for _, r := range [][2]string{{``, ``}, {`"progressToken":1`, `"io.modelcontextprotocol/protocolVersion":"v"`},
		{`,"name":"echo"`, `,"uri":"u"`}, {`,"arguments":{"a":1}`, ``}, {`{"a":1}`, `{"a":{}}`}, {`{"a":1}}`, `{"a":1},"uri":"u"}`},
		{`{"a":1}}`, `{"a":1},"_meta":{}}`}, {`"name":"echo"`, `"name":"echo"`}, {`"_meta":{"progressToken":1},`, `"_meta":{},`}} {
		seeds = append(seeds, strings.Replace(mf, r[0], r[1], 1))
	}
	return append(seeds, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":`, `{"jsonrpc":"2.0","id":"`, `{"jsonrpc":"2.0","id":7`)
}

// comparePeekShape fails t when PeekWith reads msg differently with the
// usual-shape readers and without them.
func comparePeekShape(t *testing.T, msg []byte, o PeekConfig) {
	t.Helper()
	// Read twice: with a memo, the second read may use what the first
	// remembered.
	for range 2 {
		comparePeekShapeOnce(t, msg, o)
	}
}

// comparePeekShapeOnce is one read of comparePeekShape's.
func comparePeekShapeOnce(t *testing.T, msg []byte, o PeekConfig) (Envelope, error) {
	t.Helper()
	var want Envelope
	g := PeekConfig{MaxDepth: o.MaxDepth, Memo: genericPeek}
	errWant := PeekWith(msg, &want, g)
	var got Envelope
	errGot := PeekWith(msg, &got, o)
	if errGot != errWant {
		t.Fatalf("%q (depth %d, memo %v): error %v, the object loop alone %v", msg, o.MaxDepth, o.Memo != nil, errGot, errWant)
	}
	if a, b := spansOf(msg, &got), spansOf(msg, &want); a != b {
		t.Fatalf("%q (depth %d, memo %v):\n got %+v\nwant %+v", msg, o.MaxDepth, o.Memo != nil, a, b)
	}
	if want.Template() != 0 {
		t.Fatalf("%q: the object loop gave template %d", msg, want.Template())
	}
	return got, errGot
}

// templateKey is what Envelope.Template promises of every message taken
// under one generation: the same members, byte for byte, each as the
// promise says.
func templateKey(t *testing.T, msg []byte, e *Envelope) string {
	t.Helper()
	if e.Kind != KindRequest || (e.IDKind != IDNumber && e.IDKind != IDString) ||
		!e.Method.Present || e.Method.Escaped || !e.Name.Present || e.Name.Escaped ||
		!e.ProtocolVersion.Present || e.ProtocolVersion.Escaped || e.ClientInfo == nil || e.ClientCapabilities == nil ||
		e.URI.Present || e.LogLevel.Present || e.RequestID != nil || e.NonStringVersion {
		t.Fatalf("%q: template %d, but not a plain request: %+v", msg, e.Template(), spansOf(msg, e))
	}
	return fmt.Sprintf("%q %q %q %q %q", e.Method.Raw, e.Name.Raw, e.ProtocolVersion.Raw, e.ClientInfo, e.ClientCapabilities)
}

// checkTemplate holds e, read from msg without an error, to the promise
// of Envelope.Template: the first message of a generation (seen) sets
// what every other must repeat.
func checkTemplate(t *testing.T, seen map[uint64]string, msg []byte, e *Envelope) {
	t.Helper()
	g := e.Template()
	if g == 0 {
		return
	}
	k := templateKey(t, msg, e)
	if was, ok := seen[g]; ok && was != k {
		t.Fatalf("%q: template %d with %s, an earlier message with %s", msg, g, k, was)
	}
	seen[g] = k
}

// envSpans is an Envelope with every span as its place in the message.
type envSpans struct {
	Kind                                                      Kind
	IDKind                                                    IDKind
	ID, Params, Arguments, Meta, RequestID, Caps, Token, Info [2]int
	Method, Name, URI, Version, LogLevel                      [4]int
	NonStringVersion, HasResult, HasError                     bool
	ArgN                                                      uint8
	ArgLen                                                    uint16
	ArgAt                                                     bool
	Args                                                      [maxArgMembers]argMember
}

func spansOf(msg []byte, e *Envelope) envSpans {
	at := func(p []byte) [2]int {
		if p == nil {
			return [2]int{-1, -1}
		}
		return [2]int{int(addrOf(p) - addrOf(msg)), len(p)}
	}
	str := func(s Str) [4]int {
		a := at(s.Raw)
		esc, pr := 0, 0
		if s.Escaped {
			esc = 1
		}
		if s.Present {
			pr = 1
		}
		return [4]int{a[0], a[1], esc, pr}
	}
	v := envSpans{Kind: e.Kind, IDKind: e.IDKind,
		ID: at(e.ID), Params: at(e.Params), Arguments: at(e.Arguments), Meta: at(e.Meta), RequestID: at(e.RequestID),
		Caps: at(e.ClientCapabilities), Token: at(e.ProgressToken), Info: at(e.ClientInfo),
		Method: str(e.Method), Name: str(e.Name), URI: str(e.URI), Version: str(e.ProtocolVersion), LogLevel: str(e.LogLevel),
		NonStringVersion: e.NonStringVersion, HasResult: e.HasResult, HasError: e.HasError,
		ArgN: e.argN, ArgLen: e.argLen, ArgAt: e.argAt == addrOf(e.Arguments) && e.argN != 0}
	if e.argN > 0 {
		copy(v.Args[:], e.args[:e.argN-1])
	}
	return v
}

// FuzzArgString: Envelope.ArgString, which reads the members Peek recorded
// when it did, gives what LookupString gives on the same arguments.
func FuzzArgString(f *testing.F) {
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":`
	for _, s := range []struct{ args, key string }{
		{`{"text":"hello world"}`, "text"},
		{`{"k":"a","k":"b"}`, "k"},
		{`{"k":"a","k":2}`, "k"},
		{`{"abcdefgh":"x","abcdefghi":"y"}`, "abcdefgh"},
		{`{"ab":"x","s":"a\"b"}`, "s"},
	} {
		f.Add([]byte(head+s.args+"}}"), s.key)
	}
	f.Fuzz(func(t *testing.T, msg []byte, key string) {
		var env Envelope
		Peek(msg, &env)
		got, ok := env.ArgString(key)
		want, wok := LookupString(env.Arguments, key)
		if ok != wok || !bytes.Equal(got.Raw, want.Raw) || got.Escaped != want.Escaped || got.Present != want.Present {
			t.Fatalf("%q key %q: ArgString %q %+v %v, LookupString %q %+v %v", env.Arguments, key, got.Raw, got, ok, want.Raw, want, wok)
		}
	})
}

// FuzzPeekLine checks PeekLine against what a line transport did before
// it: find the line's end, then PeekWith. On any input (a message, then
// what follows it in the buffer), depth limit and memo (filled by prev,
// read by PeekWith or by PeekLine): when PeekLine takes the line, buf[:n]
// holds no '\n' and buf[n] is one, and PeekWith on the line (without one
// '\r' before the '\n') reads it without an error and records the same
// envelope, every span at the same offset, as the object loop alone does.
func FuzzPeekLine(f *testing.F) {
	for j, s := range shapeSeeds() {
		for _, tail := range []string{"\n", "\r\n", "\n" + fixture, "\r", " \n", "\n\n", ""} {
			f.Add([]byte(s), []byte(tail), []byte(fixture), j%6)
		}
	}
	// _meta first, cut there, then a '\n' that skipArgs would step over.
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"x":1},"name":"echo","arguments":{"a"`),
		[]byte("\n:1}}}\n"), []byte(fixture), 1)
	f.Fuzz(func(t *testing.T, msg, tail, prev []byte, depth int) {
		buf := append(append(make([]byte, 0, len(msg)+len(tail)), msg...), tail...)
		memo := new(PeekMemo)
		o := PeekConfig{MaxDepth: depth % 8, Memo: memo}
		var env Envelope
		if depth&8 != 0 {
			PeekLine(prev, &env, o)
		} else {
			PeekWith(prev, &env, o)
		}
		for range 2 { // the second read may use what the first remembered
			var got Envelope
			n := PeekLine(buf, &got, o)
			if n < 0 {
				continue
			}
			if n >= len(buf) || buf[n] != '\n' || bytes.IndexByte(buf[:n], '\n') >= 0 {
				t.Fatalf("%q: PeekLine took %d bytes, not a line", buf, n)
			}
			line := buf[:n]
			if n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			var want Envelope
			if err := PeekWith(line, &want, PeekConfig{MaxDepth: o.MaxDepth, Memo: genericPeek}); err != nil {
				t.Fatalf("%q: PeekLine took the line, PeekWith: %v", line, err)
			}
			if a, b := spansOf(line, &got), spansOf(line, &want); a != b {
				t.Fatalf("%q (depth %d):\n got %+v\nwant %+v", buf, o.MaxDepth, a, b)
			}
		}
	})
}

// dirtyEnvelope sets every field of env, exported or not, to a value no
// Peek of another buffer gives: what a reused envelope may hold.
func dirtyEnvelope(env *Envelope) {
	junk := []byte(`{"junk":"junk","more":[1,2,3]}`)
	s := Str{Raw: junk[2:6], Escaped: true, Present: true}
	*env = Envelope{Kind: KindResponse, ID: junk[1:7], IDKind: IDInvalid, Method: s, Params: junk,
		Name: s, URI: s, Arguments: junk, Meta: junk, RequestID: junk[9:15],
		ProtocolVersion: s, NonStringVersion: true, ClientCapabilities: junk, ProgressToken: junk[:3],
		LogLevel: s, ClientInfo: junk, HasResult: true, HasError: true,
		argN: 3, argLen: uint16(len(junk)), argAt: addrOf(junk)}
	for j := range env.args {
		env.args[j] = newArgMember(1, 5, 7, 13)
	}
}

// checkPeekLineReused fails t when PeekLine into an envelope that holds
// another message's peek (or junk: dirty) records msg+tail differently
// from PeekLine into a fresh one: the same n and, when taken, the same
// envelope (spansOf: every span, flag and recorded member). Both use a
// memo filled by prev alike.
func checkPeekLineReused(t *testing.T, buf, prev []byte, depth int, dirty bool) {
	t.Helper()
	var mFresh, mReused PeekMemo
	o := PeekConfig{MaxDepth: depth % 8, Memo: &mFresh}
	r := PeekConfig{MaxDepth: depth % 8, Memo: &mReused}
	var scratch, reused Envelope
	PeekWith(prev, &scratch, o)
	PeekWith(prev, &reused, r)
	if dirty {
		dirtyEnvelope(&reused)
	} else {
		PeekLine(prev, &reused, r) // what the walk leaves of prev, taken or not
	}
	for k := range 2 { // the second read may use what the first remembered
		var fresh Envelope
		n := PeekLine(buf, &fresh, o)
		m := PeekLine(buf, &reused, r)
		if n != m {
			t.Fatalf("%q after %q (read %d, dirty %v): PeekLine %d into a fresh envelope, %d into a reused one", buf, prev, k, dirty, n, m)
		}
		if n < 0 {
			continue
		}
		if a, b := spansOf(buf, &reused), spansOf(buf, &fresh); a != b {
			t.Fatalf("%q after %q (read %d, dirty %v):\nreused %+v\n fresh %+v", buf, prev, k, dirty, a, b)
		}
	}
}

// TestPeekLineReused: what PeekLine leaves in a reused envelope must be
// what it gives a fresh one, for every shape seed after every other one
// and after junk in every field: the guard for any PeekLine that clears
// less than the whole envelope (profiles/README.engine12.md tried one).
func TestPeekLineReused(t *testing.T) {
	seeds := shapeSeeds()
	for _, s := range seeds {
		for _, tail := range []string{"\n", "\r\n", " \n"} {
			buf := []byte(s + tail)
			checkPeekLineReused(t, buf, []byte(fixture), 0, true)
			for _, prev := range seeds {
				checkPeekLineReused(t, buf, []byte(prev+"\n"), 0, false)
			}
		}
	}
}

// FuzzPeekLineReused is TestPeekLineReused on any message, tail, earlier
// message and depth limit.
func FuzzPeekLineReused(f *testing.F) {
	seeds := shapeSeeds()
	for j, s := range seeds {
		f.Add([]byte(s), []byte("\n"), []byte(seeds[(j*7+3)%len(seeds)]+"\n"), j%10)
	}
	f.Fuzz(func(t *testing.T, msg, tail, prev []byte, depth int) {
		buf := append(append(make([]byte, 0, len(msg)+len(tail)), msg...), tail...)
		checkPeekLineReused(t, buf, prev, depth, depth&8 != 0)
	})
}

// FuzzPeekTemplate: a memo's template (learn, replay) gives what the
// object loop alone gives, on messages that share the stretches a
// template keeps and differ anywhere else. Three messages are built
// from the same pieces — head, the id, a, the arguments, bp, the
// progressToken, the tail — each with its own id, arguments, token and
// tail (the parts a client changes, and what may follow), the shared
// pieces fuzzed too; they are read in turn through one memo, each by
// PeekWith or PeekLine and with its own depth limit (flags), and each
// read is compared with the object loop's on the same bytes.
func FuzzPeekTemplate(f *testing.F) {
	const (
		a    = `,"method":"tools/call","params":{"name":"echo","arguments":`
		bp   = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":`
		head = `{"jsonrpc":"2.0","id":`
		end  = "}}}\n"
	)
	for j, r := range [][]string{
		{`1`, `{"text":"hello world"}`, `1`, end, `22`, `{"text":"x"}`, `"p"`, end, `333`, `{}`, `7`, end},
		{`1`, `{"text":"hello world"}`, `1`, end, `2`, `{"text":{"a":1}}`, `1`, end, `3`, `{"text":"y"}`, `1`, `}}}`},
		{`1`, `{}`, `1`, end, `"a"`, `{"a":1,"b":true}`, `-1`, end, `"b"`, `{"a" :1}`, `1.5`, end},
		{`1`, `{"a":"b"}`, `1`, end, `2`, `{"a":"b","a":"c"}`, `1`, end, `3`, "{\"a\":\n1}", `1`, end},
		{`1`, `{"a":"b"}`, `"x"`, end, `2`, `{"a":"b"}`, `"y`, end, `01`, `{"a":"b"}`, `1`, end},
		{`1`, `{}`, `1`, end, `2`, `{}`, `1`, `}},"x":1}` + "\n", `3`, `{}`, `1`, `},"x":1}}` + "\n"},
		{`1`, `{}`, `1`, end, `2`, `{}`, `1`, `}}}}` + "\n", `3`, `{}`, `1`, `}}` + "\n"},
		{`1`, `{}`, `1`, "}}}\r\n", `2`, `{}`, `1`, "}}} \n", `3`, `{}`, `1`, "}}}"},
	} {
		for _, flags := range []int{0, 4 << 3, 5 << 3, 7 << 3, 2 << 3, 3 | 3<<6 | 4<<9 | 5<<12, 4 | 2<<6 | 7<<12} {
			f.Add(head, a, bp, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], flags+j)
		}
	}
	// Without the progressToken, and with other shared pieces.
	noTok := strings.TrimSuffix(bp, `,"progressToken":`)
	f.Add(head, a, noTok, `1`, `{"a":1}`, ``, end, `2`, `{"a":2}`, ``, end, `3`, `{"a":3}`, `,"progressToken":1`, end, 2<<3)
	f.Add(head, a, bp, `1`, `{"a":1}`, `1`, end, `2`, `{"a":2}`, `1}`, end, `3`, `{"a":3}`, `1`, end, 5<<3)
	f.Add(head, strings.Replace(a, "echo", `e\"cho`, 1), bp, `1`, `{}`, `1`, end, `2`, `{}`, `1`, end, `3`, `{}`, `1`, end, 3)
	for _, ws := range []string{" ", "\n"} {
		f.Add(head, a, strings.Replace(bp, `"1"}`, `"1"`+ws+`}`, 1), `1`, `{}`, `1`, end, `2`, `{}`, `1`, end, `3`, `{}`, `1`, end, 1<<3|1<<6)
	}
	// A _meta the memo does not keep (a '\n' in clientInfo), then a line
	// whose _meta is empty but for the token: a template must not stand
	// for a _meta the memo does not hold.
	f.Add(head, a, strings.Replace(bp, `"1"}`, "\"1\"\n}", 1), `1`, `{}`, `1`, end,
		`2`, `{},"_meta":{,"progressToken":1}}}`+"\n", `1`, end, `3`, `{}`, `1`, end, 1<<3)
	f.Add(`{"jsonrpc":"2.0","id" :`, a, bp, `1`, `{}`, `1`, end, `2`, `{}`, `1`, end, `3`, `{}`, `1`, end, 4)
	f.Fuzz(func(t *testing.T, head, a, bp, id1, args1, tok1, tail1, id2, args2, tok2, tail2, id3, args3, tok3, tail3 string, flags int) {
		memo := new(PeekMemo)
		seen := map[uint64]string{}
		for j, part := range [][4]string{{id1, args1, tok1, tail1}, {id2, args2, tok2, tail2}, {id3, args3, tok3, tail3}, {id3, args3, tok3, tail3}} {
			// Per read: PeekLine or PeekWith (bit 0 of its three bits),
			// and its depth limit (0: the default; 2 to 4).
			g := flags >> (3 * j) & 7
			o := PeekConfig{Memo: memo}
			if g>>1 != 0 {
				o.MaxDepth = g>>1 + 1
			}
			if !memoOK(memo) {
				t.Fatalf("read %d: the memo's offsets out of order: %+v %+v", j, memo.at, memo.tat)
			}
			msg := []byte(head + part[0] + a + part[1] + bp + part[2] + part[3])
			if g&1 == 0 {
				if got, err := comparePeekShapeOnce(t, msg, o); err == nil {
					checkTemplate(t, seen, msg, &got)
				}
				continue
			}
			var got Envelope
			n := PeekLine(msg, &got, o)
			if n < 0 {
				continue
			}
			if n >= len(msg) || msg[n] != '\n' || bytes.IndexByte(msg[:n], '\n') >= 0 {
				t.Fatalf("%q: PeekLine took %d bytes, not a line", msg, n)
			}
			line := msg[:n]
			if n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			var want Envelope
			if err := PeekWith(line, &want, PeekConfig{MaxDepth: o.MaxDepth, Memo: genericPeek}); err != nil {
				t.Fatalf("%q: PeekLine took the line, PeekWith: %v", line, err)
			}
			if x, y := spansOf(line, &got), spansOf(line, &want); x != y {
				t.Fatalf("%q (read %d, depth %d):\n got %+v\nwant %+v", msg, j, o.MaxDepth, x, y)
			}
			checkTemplate(t, seen, line, &got)
		}
	})
}
