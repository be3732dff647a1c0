package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// view is an Envelope flattened to strings for comparison; "-" = absent.
type view struct {
	Kind                    Kind
	ID                      string
	IDKind                  IDKind
	Method, Name, URI       string
	Params, Arguments, Meta string
	Version, LogLevel       string
	Caps, Token, RequestID  string
	ClientInfo              string
	HasResult, HasError     bool
	NonStringVersion        bool
}

func raw(b []byte) string {
	if b == nil {
		return "-"
	}
	return string(b)
}

func str(s Str) string {
	if !s.Present {
		return "-"
	}
	return s.String()
}

func viewOf(e *Envelope) view {
	return view{
		Kind: e.Kind, ID: raw(e.ID), IDKind: e.IDKind,
		Method: str(e.Method), Name: str(e.Name), URI: str(e.URI),
		Params: raw(e.Params), Arguments: raw(e.Arguments), Meta: raw(e.Meta),
		Version: str(e.ProtocolVersion), LogLevel: str(e.LogLevel),
		Caps: raw(e.ClientCapabilities), Token: raw(e.ProgressToken), RequestID: raw(e.RequestID), ClientInfo: raw(e.ClientInfo),
		HasResult: e.HasResult, HasError: e.HasError, NonStringVersion: e.NonStringVersion,
	}
}

// absent returns a view with every field absent, to be filled by cases.
func absent() view {
	return view{ID: "-", Method: "-", Name: "-", URI: "-", Params: "-", Arguments: "-", Meta: "-",
		Version: "-", LogLevel: "-", Caps: "-", Token: "-", RequestID: "-", ClientInfo: "-"}
}

const exampleClient = `{"name":"ExampleClient","version":"1.0.0"}`

const stdMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`

// TestPeekVectors checks every request/notification/response vector of
// EXAMPLES.md (GEN-01, GEN-03, GEN-05, GEN-07, META-02, HDR-04).
func TestPeekVectors(t *testing.T) {
	type tc struct {
		name string
		msg  string
		want func(v *view)
	}
	cases := []tc{
		{"§1 discover", vecDiscover, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method = KindRequest, "1", IDNumber, "server/discover"
			v.Params = `{"_meta":` + stdMeta + `}`
			v.Meta, v.Version, v.Caps, v.ClientInfo = stdMeta, "2026-07-28", "{}", exampleClient
		}},
		{"§1 discover response", vecDiscoverResp, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.HasResult = KindResponse, "1", IDNumber, true
		}},
		{"§2 tools/call", vecToolsCall, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Name = KindRequest, "2", IDNumber, "tools/call", "execute_sql"
			v.Arguments = `{"region":"us-west1","priority":42,"dry_run":false,"query":"SELECT 1"}`
			v.Params = `{"name":"execute_sql","arguments":` + v.Arguments + `,"_meta":` + stdMeta + `}`
			v.Meta, v.Version, v.Caps, v.ClientInfo = stdMeta, "2026-07-28", "{}", exampleClient
		}},
		{"§2 tools/call response", vecToolsCallResp, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.HasResult = KindResponse, "2", IDNumber, true
		}},
		{"§2b Zürich", vecToolsCallZurich, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Name = KindRequest, "4", IDNumber, "tools/call", "execute_sql"
			v.Arguments = `{"region":"Zürich","query":"SELECT 1"}`
			v.Params = `{"name":"execute_sql","arguments":` + v.Arguments + `,"_meta":` + stdMeta + `}`
			v.Meta, v.Version, v.Caps, v.ClientInfo = stdMeta, "2026-07-28", "{}", exampleClient
		}},
		{"§2d resources/read", vecResourcesRead, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.URI = KindRequest, "30", IDNumber, "resources/read", "file:///projects/app/config.json"
			v.Params = `{"uri":"file:///projects/app/config.json","_meta":` + stdMeta + `}`
			v.Meta, v.Version, v.Caps, v.ClientInfo = stdMeta, "2026-07-28", "{}", exampleClient
		}},
		{"§3 progress token", vecToolsCallProgress, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Name = KindRequest, "3", IDNumber, "tools/call", "execute_sql"
			v.Arguments = `{"region":"us-west1","query":"SELECT * FROM big"}`
			meta := stdMeta[:len(stdMeta)-1] + `,"progressToken":"tok-3"}`
			v.Params = `{"name":"execute_sql","arguments":` + v.Arguments + `,"_meta":` + meta + `}`
			v.Meta, v.Version, v.Caps, v.Token, v.ClientInfo = meta, "2026-07-28", "{}", `"tok-3"`, exampleClient
		}},
		{"§3 progress notification", vecProgress1, func(v *view) {
			v.Kind, v.Method = KindNotification, "notifications/progress"
			v.Params = `{"progressToken":"tok-3","progress":0.25,"total":1,"message":"scanning"}`
		}},
		{"§3 final response", vecProgressResp, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.HasResult = KindResponse, "3", IDNumber, true
		}},
		{"§4 cancelled", vecCancelled, func(v *view) {
			v.Kind, v.Method, v.RequestID = KindNotification, "notifications/cancelled", "3"
			v.Params = `{"requestId":3,"reason":"user aborted"}`
		}},
		{"§5 mismatch request", vecMismatchReq, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Name, v.Arguments = KindRequest, "6", IDNumber, "tools/call", "bar", "{}"
			v.Params = `{"name":"bar","arguments":{},"_meta":` + stdMeta + `}`
			v.Meta, v.Version, v.Caps, v.ClientInfo = stdMeta, "2026-07-28", "{}", exampleClient
		}},
		{"§5 mismatch error", vecMismatchResp, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.HasError = KindResponse, "6", IDNumber, true
		}},
		{"§6 unsupported error", vecUnsupportedResp, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.HasError = KindResponse, "8", IDNumber, true
		}},
		{"§7 no _meta", vecNoMeta, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Params = KindRequest, "10", IDNumber, "tools/list", "{}"
		}},
		{"§7 legacy initialize", vecLegacyInit, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method = KindRequest, "0", IDNumber, "initialize"
			v.Params = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"LegacyClient","version":"1.0.0"}}`
		}},
		{"§8 listen (string id)", vecListen, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method = KindRequest, `"listen-1"`, IDString, "subscriptions/listen"
			v.Params = vecListen[strings.Index(vecListen, `"params":`)+9 : len(vecListen)-1]
			v.Meta, v.Version, v.Caps, v.ClientInfo = stdMeta, "2026-07-28", "{}", exampleClient
		}},
		{"§8 listen completion", vecListenResp, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.HasResult = KindResponse, `"listen-1"`, IDString, true
		}},
		{"§9a numeric progress token", vecStdioCall, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Name = KindRequest, "7", IDNumber, "tools/call", "execute_sql"
			v.Arguments = `{"region":"us-west1","query":"SELECT * FROM big"}`
			meta := stdMeta[:len(stdMeta)-1] + `,"progressToken":7}`
			v.Params = `{"name":"execute_sql","arguments":` + v.Arguments + `,"_meta":` + meta + `}`
			v.Meta, v.Version, v.Caps, v.Token, v.ClientInfo = meta, "2026-07-28", "{}", "7", exampleClient
		}},
		{"§9a cancel", vecStdioCancel, func(v *view) {
			v.Kind, v.Method, v.RequestID = KindNotification, "notifications/cancelled", "7"
			v.Params = `{"requestId":7,"reason":"User requested cancellation"}`
		}},
		{"§9c probe", vecProbe, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method = KindRequest, `"probe-1"`, IDString, "server/discover"
			meta := strings.Replace(stdMeta, "2026-07-28", "2027-01-01", 1)
			v.Params = `{"_meta":` + meta + `}`
			v.Meta, v.Version, v.Caps, v.ClientInfo = meta, "2027-01-01", "{}", exampleClient
		}},
		{"§9d parse error reply (response without id)", vecParseErrResp, func(v *view) {
			v.Kind, v.HasError = KindResponse, true
		}},
		{"§10 MRTR round 2", vecMRTR2, func(v *view) {
			v.Kind, v.ID, v.IDKind, v.Method, v.Name, v.Arguments = KindRequest, "21", IDNumber, "tools/call", "deploy", `{"env":"prod"}`
			meta := strings.Replace(stdMeta, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}`, 1)
			v.Params = vecMRTR2[strings.Index(vecMRTR2, `"params":`)+9 : len(vecMRTR2)-1]
			v.Meta, v.Version, v.Caps, v.ClientInfo = meta, "2026-07-28", `{"elicitation":{"form":{}}}`, exampleClient
		}},
	}
	for i, c := range cases {
		var env Envelope
		if err := Peek([]byte(c.msg), &env); err != nil {
			t.Errorf("#%d %s: Peek: %v", i, c.name, err)
			continue
		}
		want := absent()
		c.want(&want)
		if got := viewOf(&env); got != want {
			t.Errorf("#%d %s:\n got %+v\nwant %+v", i, c.name, got, want)
		}
	}
}

// TestPeekErrors covers A7, A8, A9, A10, A11, A12, A13, GEN-02, GEN-03, GEN-09.
func TestPeekErrors(t *testing.T) {
	cases := []struct {
		name    string
		msg     string
		wantErr *Error
		wantID  string // "-" = env.ID nil
	}{
		// A7: not JSON / truncated; STD-16: no id is echoed on -32700.
		{"A7 hello", "hello", ErrParse, "-"},
		{"A7 truncated", `{"jsonrpc":"2.0",`, ErrParse, "-"},
		{"§9d truncated after method", vecTruncatedLine, ErrParse, "-"},
		{"empty", "", ErrParse, "-"},
		{"whitespace only", " \n\t\r ", ErrParse, "-"},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"m"}x`, ErrParse, "-"},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"m"} {}`, ErrParse, "-"},
		{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"m",}`, ErrParse, "-"},
		{"leading zero", `{"jsonrpc":"2.0","id":01,"method":"m"}`, ErrParse, "-"},
		{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"\x"}`, ErrParse, "-"},
		{"short \\u", `{"jsonrpc":"2.0","id":1,"method":"\u12"}`, ErrParse, "-"},
		{"raw control char", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}", ErrParse, "-"},
		{"single quotes", `{'jsonrpc':'2.0'}`, ErrParse, "-"},
		{"bad literal", `{"jsonrpc":"2.0","id":1,"method":"m","x":tru}`, ErrParse, "-"},
		{"mismatched brackets", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1}}`, ErrParse, "-"},
		{"NaN", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":NaN}}`, ErrParse, "-"},
		{"deep syntax error after id", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,]}}`, ErrParse, "-"},
		// A8 / GEN-02: invalid UTF-8 anywhere in a string.
		{"A8 0xFF 0xFE in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\xfeb\"}", ErrInvalidUTF8, "-"},
		{"A8 in key", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"\xc3\":1}", ErrInvalidUTF8, "-"},
		{"A8 deep in arguments", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"arguments\":{\"a\":[\"\xed\xa0\x80\"]}}}", ErrInvalidUTF8, "-"},
		{"A8 overlong", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xaf\"}", ErrInvalidUTF8, "-"},
		{"A8 above U+10FFFF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xf4\x90\x80\x80\"}", ErrInvalidUTF8, "-"},
		{"A8 truncated sequence", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xe4\xb8\"}", ErrInvalidUTF8, "-"},
		{"byte 0xFF outside a string", "{\"jsonrpc\":\"2.0\",\xff}", ErrParse, "-"},
		// A11 / GEN-09.
		{"A11 batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, ErrBatch, "-"},
		{"A11 empty batch", `[]`, ErrBatch, "-"},
		{"A11 broken batch is a parse error", `[{"jsonrpc":"2.0","id":1,"method"`, ErrParse, "-"},
		{"GEN-01 string", `"hello"`, ErrNotObject, "-"},
		{"GEN-01 number", `42`, ErrNotObject, "-"},
		{"GEN-01 null", ` null `, ErrNotObject, "-"},
		// A12 / GEN-03.
		{"A12 id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, ErrBadID, "-"},
		{"A12 id array", `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, ErrBadID, "-"},
		{"A12 id true", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, ErrBadID, "-"},
		{"A12 id false", `{"jsonrpc":"2.0","id":false,"method":"tools/list"}`, ErrBadID, "-"},
		{"A12 id null", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, ErrBadID, "-"},
		{"GEN-03 id fraction", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, ErrBadID, "-"},
		{"GEN-03 id exponent", `{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}`, ErrBadID, "-"},
		{"A12 jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, ErrBadVersion, "1"},
		{"A12 jsonrpc missing", `{"id":1,"method":"tools/list"}`, ErrBadVersion, "1"},
		{"A12 jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"tools/list"}`, ErrBadVersion, "1"},
		{"A12 jsonrpc 2.00", `{"jsonrpc":"2.00","id":1,"method":"tools/list"}`, ErrBadVersion, "1"},
		{"A12 missing method", `{"jsonrpc":"2.0","id":1}`, ErrNoMethod, "1"},
		{"A12 missing method, params only", `{"jsonrpc":"2.0","id":"x","params":{}}`, ErrNoMethod, `"x"`},
		{"empty object", `{}`, ErrBadVersion, "-"},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, ErrBadMethod, "1"},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, ErrBadMethod, "1"},
		// A13: params null / not an object.
		{"A13 params null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, ErrBadParams, "1"},
		{"A13 params array", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`, ErrBadParams, "1"},
		{"A13 params string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`, ErrBadParams, "1"},
		{"response with result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, ErrBadResponse, "1"},
		{"response with invalid id", `{"jsonrpc":"2.0","id":[],"result":{}}`, ErrBadID, "-"},
		// A10, CVE-2026-27896: duplicates and case-variants at the inspected levels.
		{"A10 Method after method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, ErrDuplicateKey, "1"},
		{"A10 Method before method", `{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"tools/list"}`, ErrDuplicateKey, "1"},
		{"A10 Method alone", `{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`, ErrDuplicateKey, "1"},
		{"A10 duplicate method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`, ErrDuplicateKey, "1"},
		{"A10 duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, ErrDuplicateKey, "1"},
		{"A10 JSONRPC", `{"JSONRPC":"2.0","jsonrpc":"2.0","id":1,"method":"m"}`, ErrDuplicateKey, "1"},
		{"A10 ID", `{"jsonrpc":"2.0","ID":1,"method":"m"}`, ErrDuplicateKey, "-"},
		{"A10 paramſ (U+017F)", `{"jsonrpc":"2.0","id":1,"method":"m","paramſ":{}}`, ErrDuplicateKey, "1"},
		{"A10 paramſ escaped", `{"jsonrpc":"2.0","id":1,"method":"m","param\u017f":{}}`, ErrDuplicateKey, "1"},
		{"A10 escaped Method", `{"jsonrpc":"2.0","id":1,"method":"a","\u004dethod":"b"}`, ErrDuplicateKey, "1"},
		{"A10 escaped exact duplicate", `{"jsonrpc":"2.0","id":1,"method":"a","\u006dethod":"b"}`, ErrDuplicateKey, "1"},
		{"A10 params Name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`, ErrDuplicateKey, "1"},
		{"A10 params NAME only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"b"}}`, ErrDuplicateKey, "1"},
		{"A10 params URI", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"URI":"x"}}`, ErrDuplicateKey, "1"},
		{"A10 params _META", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_META":{}}}`, ErrDuplicateKey, "1"},
		{"A10 params requestid", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestid":1}}`, ErrDuplicateKey, "-"},
		{"A10 params duplicate arguments", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":{},"arguments":{}}}`, ErrDuplicateKey, "1"},
		{"A10 meta version duplicate", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`, ErrDuplicateKey, "1"},
		// A9: nesting.
		{"A9 10k [ in params, id first", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`, ErrTooDeep, "7"},
		{"A9 10k [ truncated, id first", `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"arguments":` + strings.Repeat("[", 10000), ErrTooDeep, `"deep"`},
		{"A9 10k { in _meta", `{"jsonrpc":"2.0","id":8,"method":"m","params":{"_meta":{"x":` + strings.Repeat(`{"a":`, 10000), ErrTooDeep, "8"},
		{"A9 id after deep params", `{"jsonrpc":"2.0","method":"m","params":{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `},"id":9}`, ErrTooDeep, "-"},
		{"A9 deep top-level array", strings.Repeat("[", 10000), ErrTooDeep, "-"},
		{"A9 deep id value", `{"jsonrpc":"2.0","id":` + strings.Repeat("[", 200), ErrTooDeep, "-"},
		{"A9 depth 129", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + strings.Repeat("[", 127) + strings.Repeat("]", 127) + `}}`, ErrTooDeep, "1"},
	}
	for i, c := range cases {
		var env Envelope
		err := Peek([]byte(c.msg), &env)
		if err != c.wantErr { // sentinels: exact identity
			t.Errorf("#%d %s: err = %v, want %v", i, c.name, err, c.wantErr)
			continue
		}
		if got := raw(env.ID); got != c.wantID {
			t.Errorf("#%d %s: ID = %s, want %s", i, c.name, got, c.wantID)
		}
		if c.wantErr.Code == CodeParseError && (env.Kind != KindInvalid || env.ID != nil || env.Method.Present) {
			t.Errorf("#%d %s: env not reset on parse error: %+v", i, c.name, viewOf(&env))
		}
	}
}

// TestPeekDepthBoundary pins the depth count: top-level object = 1 (A9).
func TestPeekDepthBoundary(t *testing.T) {
	build := func(levels int) []byte { // total nesting = levels
		inner := levels - 2 // top object + params object
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}}`)
	}
	for i, c := range []struct {
		max, levels int
		wantErr     error
	}{
		{0, 128, nil}, {0, 129, ErrTooDeep},
		{5, 5, nil}, {5, 6, ErrTooDeep},
		{300, 300, nil}, {300, 301, ErrTooDeep}, // beyond the inline bit stack
		{-1, MaxDepthLimit, nil}, {-1, MaxDepthLimit + 1, ErrTooDeep},
		{MaxDepthLimit * 10, MaxDepthLimit + 1, ErrTooDeep},
	} {
		var env Envelope
		err := PeekWith(build(c.levels), &env, PeekConfig{MaxDepth: c.max})
		if err != c.wantErr {
			t.Errorf("#%d max=%d levels=%d: err = %v, want %v", i, c.max, c.levels, err, c.wantErr)
		}
	}
	// MaxDepth 1 and 2: params and _meta themselves count.
	var env Envelope
	if err := PeekWith([]byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`), &env, PeekConfig{MaxDepth: 1}); err != nil {
		t.Errorf("depth 1 flat: %v", err)
	}
	if err := PeekWith([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`), &env, PeekConfig{MaxDepth: 1}); err != ErrTooDeep {
		t.Errorf("depth 1 with params: %v", err)
	}
	if err := PeekWith([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{}}}`), &env, PeekConfig{MaxDepth: 2}); err != ErrTooDeep {
		t.Errorf("depth 2 with _meta: %v", err)
	}
}

// TestPeekAccepts covers inputs that are valid and must not be rejected.
func TestPeekAccepts(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		want func(e *Envelope) bool
	}{
		{"lone surrogate escape is valid JSON syntax", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"\ud800x"}}`,
			func(e *Envelope) bool { return e.Name.String() == "\uFFFDx" }},
		{"surrogate pair", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"\ud83d\ude00"}}`,
			func(e *Envelope) bool { return e.Name.String() == "😀" }},
		{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
			func(e *Envelope) bool { return e.Method.Escaped && e.Method.EqualString("tools/call") }},
		{"escaped version", `{"jsonrpc":"2\u002e0","id":1,"method":"m"}`, func(e *Envelope) bool { return true }},
		{"whitespace everywhere", " \t\r\n{ \"jsonrpc\" : \"2.0\" , \"id\" : -5 , \"method\" : \"m\" , \"params\" : { \"_meta\" : { \"progressToken\" : \"t\" } } } \n",
			func(e *Envelope) bool {
				return string(e.ID) == "-5" && string(e.ProgressToken) == `"t"` && string(e.Meta) == `{ "progressToken" : "t" }`
			}},
		{"big integer id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`,
			func(e *Envelope) bool { return e.IDKind == IDNumber }},
		{"-0 id", `{"jsonrpc":"2.0","id":-0,"method":"m"}`, func(e *Envelope) bool { return string(e.ID) == "-0" }},
		{"empty string id", `{"jsonrpc":"2.0","id":"","method":"m"}`, func(e *Envelope) bool { return string(e.ID) == `""` }},
		{"null id on error response (GEN-05 REC)", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			func(e *Envelope) bool { return e.Kind == KindResponse && e.IDKind == IDNull && e.ID == nil }},
		{"unknown members ignored", `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"Method":"x","method":[1,2,{"id":null}]}}`,
			func(e *Envelope) bool { return e.Method.EqualString("m") }},
		{"case variants below inspected levels are data", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"Name":"x","name":"y","name":"z"}}}`,
			func(e *Envelope) bool { return !e.Name.Present }},
		{"name not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"uri":null}}`,
			func(e *Envelope) bool { return !e.Name.Present && !e.URI.Present }},
		{"version not a string", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}}`,
			func(e *Envelope) bool { return !e.ProtocolVersion.Present && e.NonStringVersion }},
		{"caps not an object", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":[]}}}`,
			func(e *Envelope) bool { return e.ClientCapabilities == nil && e.Meta != nil }},
		{"_meta not an object", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"x"}}`,
			func(e *Envelope) bool { return e.Meta == nil }},
		{"progressToken fraction ignored", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1.5}}}`,
			func(e *Envelope) bool { return e.ProgressToken == nil }},
		{"requestId string", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen-1"}}`,
			func(e *Envelope) bool { return string(e.RequestID) == `"listen-1"` }},
		{"logLevel", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/logLevel":"debug"}}}`,
			func(e *Envelope) bool { return e.LogLevel.EqualString("debug") }},
		{"non-ASCII unknown key of similar length", `{"jsonrpc":"2.0","id":1,"method":"m","paramsé":1,"µ":2}`,
			func(e *Envelope) bool { return true }},
		{"escaped unknown long key", `{"jsonrpc":"2.0","id":1,"method":"m","` + strings.Repeat(`\u0041`, 200) + `":1}`,
			func(e *Envelope) bool { return true }},
		{"all literal kinds", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":[true,false,null,0,-1.5e-3,1E+2,"s",{},[]]}}`,
			func(e *Envelope) bool { return string(e.Arguments) == `[true,false,null,0,-1.5e-3,1E+2,"s",{},[]]` }},
		{"depth exactly 128", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + strings.Repeat("[", 126) + strings.Repeat("]", 126) + `}}`,
			func(e *Envelope) bool { return true }},
		{"near-miss _meta names are unknown (fuzz regression: ^ and | precedence)",
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"iA00(0101A00A0000o$oAcl#clientCapabilities":{},"io.modelcontextprotocol/protocolVersionX":"a","io.modelcontextprotocoX/protocolVersion":"b","io.modelcontextprotocol/protocolVersio\"":"c","io.modelcontextprotocol/clientInfoo":1,"zo.modelcontextprotocol/logLevel":"d"}}}`,
			func(e *Envelope) bool {
				return e.ClientCapabilities == nil && !e.ProtocolVersion.Present && !e.LogLevel.Present
			}},
		// META-02: inside _meta a case variant is another key, never the
		// recognised one; only the exact spelling (escapes allowed) counts.
		{"meta version case variant is unknown", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/ProtocolVersion":"2026-07-28"}}}`,
			func(e *Envelope) bool { return !e.ProtocolVersion.Present && e.Meta != nil }},
		{"meta variants beside the real keys are ignored", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/PROTOCOLVERSION":"2099-01-01","io.modelcontextprotocol/protocolVersion":"2026-07-28","IO.modelcontextprotocol/protocolVersion":"x","io.modelcontextprotocol/clientinfo":{"name":"evil"},"io.modelcontextprotocol/clientCapabilitieſ":{"x":{}},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			func(e *Envelope) bool {
				return e.ProtocolVersion.EqualString("2026-07-28") && string(e.ClientCapabilities) == "{}" && e.ClientInfo == nil
			}},
		{"Kelvin sign in progresstoKen is unknown", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToKen":1,"progressTo\u212aen":2}}}`,
			func(e *Envelope) bool { return e.ProgressToken == nil }},
		{"escaped exact meta name is the name", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28"}}}`,
			func(e *Envelope) bool { return e.ProtocolVersion.EqualString("2026-07-28") }},
		{"DEL and U+FFFD raw", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\x7f\xef\xbf\xbd\"}",
			func(e *Envelope) bool { return e.Method.EqualString("\x7f\uFFFD") }},
	}
	for i, c := range cases {
		var env Envelope
		if err := Peek([]byte(c.msg), &env); err != nil {
			t.Errorf("#%d %s: %v", i, c.name, err)
			continue
		}
		if !c.want(&env) {
			t.Errorf("#%d %s: unexpected envelope %+v", i, c.name, viewOf(&env))
		}
	}
}

// TestPeekResetsEnvelope: a reused Envelope carries nothing over (GEN-11).
func TestPeekResetsEnvelope(t *testing.T) {
	var env Envelope
	if err := Peek([]byte(vecToolsCallProgress), &env); err != nil {
		t.Fatal(err)
	}
	if err := Peek([]byte(vecNoMeta), &env); err != nil {
		t.Fatal(err)
	}
	if env.ProtocolVersion.Present || env.Meta != nil || env.Name.Present || env.ProgressToken != nil || env.Arguments != nil {
		t.Fatalf("stale fields: %+v", viewOf(&env))
	}
}

// TestPeekSplitPoints: every proper prefix of every vector is rejected with
// -32700 (or ErrTooDeep), never accepted as something else; every suffix
// and single-byte-deleted variant never panics (STYLE: every split point).
func TestPeekSplitPoints(t *testing.T) {
	vecs := []string{vecDiscover, vecToolsCall, vecToolsCallZurich, vecResourcesRead, vecToolsCallProgress,
		vecProgress1, vecCancelled, vecListen, vecListenResp, vecUnsupportedResp, vecMRTR2, vecParseErrResp,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`, `"str\u00e9"`, `-12.5e+3`, `{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"m"}`}
	for vi, v := range vecs {
		msg := []byte(v)
		var env Envelope
		for n := 0; n < len(msg); n++ {
			prefix := bytes.Clone(msg[:n]) // exact capacity: reads past n would fault under -race/asan
			err := Peek(prefix, &env)
			var e *Error
			if !errors.As(err, &e) || (e.Code != CodeParseError && err != ErrTooDeep) {
				// a numeric prefix of a bare number is itself a number: that is fine
				if v == `-12.5e+3` && (err == ErrNotObject) {
					continue
				}
				t.Errorf("vec %d prefix %d %q: err = %v, want -32700", vi, n, prefix, err)
			}
			_ = Peek(bytes.Clone(msg[n:]), &env)
			del := append(bytes.Clone(msg[:n]), msg[n+1:]...)
			_ = Peek(del, &env)
		}
	}
}

// TestPeekSameResultWithSurroundingBytes: Peek never reads outside msg.
func TestPeekSameResultWithSurroundingBytes(t *testing.T) {
	buf := []byte(`XXXX` + vecToolsCall + `}}}}`)
	msg := buf[4 : 4+len(vecToolsCall)]
	var a, b Envelope
	if err := Peek(msg, &a); err != nil {
		t.Fatal(err)
	}
	if err := Peek([]byte(vecToolsCall), &b); err != nil {
		t.Fatal(err)
	}
	if viewOf(&a) != viewOf(&b) {
		t.Fatal("results differ")
	}
	// A prefix inside a larger buffer must still be rejected.
	if err := Peek(buf[4:4+len(vecToolsCall)-1], &a); err != ErrParse {
		t.Fatalf("prefix in larger buffer: %v", err)
	}
}

func TestStrEqual(t *testing.T) {
	cases := []struct {
		raw  string
		esc  bool
		v    string
		want bool
	}{
		{`abc`, false, "abc", true},
		{`abc`, false, "abd", false},
		{`a\"b`, true, `a"b`, true},
		{`\u0041\u00e9\u4e16\ud83d\ude00`, true, "Aé世😀", true},
		{`\ud800`, true, "\uFFFD", true},
		{`\ud800`, true, "\xed\xa0\x80", false},
		{`\ud800\u0041`, true, "\uFFFDA", true},
		{`\udc00\ud800`, true, "\uFFFD\uFFFD", true},
		{`x\n`, true, "x\n", true},
		{`x\n`, true, "x\ny", false},
		{`x\ny`, true, "x\n", false},
		{`\/\\\b\f\r\t`, true, "/\\\b\f\r\t", true},
		{``, false, "", true},
	}
	for i, c := range cases {
		s := Str{Raw: []byte(c.raw), Escaped: c.esc, Present: true}
		if got := s.EqualString(c.v); got != c.want {
			t.Errorf("#%d EqualString(%q, %q) = %v", i, c.raw, c.v, got)
		}
		if got := s.Equal([]byte(c.v)); got != c.want {
			t.Errorf("#%d Equal(%q, %q) = %v", i, c.raw, c.v, got)
		}
		if c.want && s.String() != c.v {
			t.Errorf("#%d String() = %q, want %q", i, s.String(), c.v)
		}
	}
	if (Str{}).EqualString("") || (Str{}).Equal(nil) {
		t.Error("absent Str must not equal anything")
	}
	// Malformed hand-made Str never panics.
	for _, r := range []string{`\`, `\u`, `\u12`, `\ud800\u`, `\q`} {
		s := Str{Raw: []byte(r), Escaped: true, Present: true}
		_ = s.String()
		_ = s.EqualString("x")
	}
}

func TestKindStrings(t *testing.T) {
	for i, c := range []struct{ got, want string }{
		{KindRequest.String(), "request"}, {KindNotification.String(), "notification"},
		{KindResponse.String(), "response"}, {KindInvalid.String(), "invalid"},
		{IDNone.String(), "none"}, {IDString.String(), "string"}, {IDNumber.String(), "number"},
		{IDNull.String(), "null"}, {IDInvalid.String(), "invalid"},
	} {
		if c.got != c.want {
			t.Errorf("#%d %q != %q", i, c.got, c.want)
		}
	}
}

// TestPeekFlatArguments: the arguments and clientInfo objects Peek skips
// with its flat-object loop get the verdict encoding/json gives, and the
// same span, whether the loop takes them or hands them to the skipper
// (nesting, whitespace, escapes, signs, fractions, bad literals, truncation).
func TestPeekFlatArguments(t *testing.T) {
	for _, a := range []string{
		`{"text":"hello world"}`, `{"a":1,"b":"x","c":true,"d":false,"e":null}`, `{"a":0}`,
		`{"region":"us-west1","priority":42,"dry_run":false,"query":"SELECT 1"}`,
		`{"a":1 }`, `{"a" :1}`, `{"a": 1}`, `{ "a":1}`, `{"a":1 ,"b":2}`, `{"a":-1}`, `{"a":1.5}`, `{"a":1e3}`,
		`{"a":"\u0041"}`, `{"a":"Zürich"}`, `{"a\"b":1}`, `{"a":{"b":1}}`, `{"a":[1]}`, `{"a":"x","b":{}}`,
		`{"a":01}`, `{"a":1,}`, `{"a":tru}`, `{"a":truex}`, `{"a":1]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1"b":2}`,
		`{"a":"x` + "\x01" + `"}`, `{"a":"` + "\xff" + `"}`, `{"a":1`, `{"a":"x"`, `{"a"`, `{"abcdefghij":"klmnopqrstuvwxyz"}`,
	} {
		for _, msg := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + a + `}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/clientInfo":` + a + `}}}`,
			// At the very end of the buffer, where the word loads stop.
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":` + a,
		} {
			var env Envelope
			err := Peek([]byte(msg), &env)
			valid := json.Valid([]byte(msg)) && utf8.ValidString(msg)
			if valid != (err != ErrParse && err != ErrInvalidUTF8) {
				t.Errorf("%s: Peek %v, encoding/json valid %v", msg, err, valid)
				continue
			}
			if err == nil {
				got := env.Arguments
				if env.ClientInfo != nil {
					got = env.ClientInfo
				}
				if string(got) != a {
					t.Errorf("%s: span %q, want %q", msg, got, a)
				}
			}
		}
	}
}

// TestPeekShape: on the standard fixture and on variants that leave its
// shape at each member, Peek reads the same with the usual-shape readers
// as with the object loop alone (FuzzPeekShape's seeds, at each depth
// limit that stops one of the fixture's levels).
func TestPeekShape(t *testing.T) {
	seeds := shapeSeeds()
	for _, s := range seeds {
		for _, depth := range []int{0, 1, 2, 3, 4, 5} {
			for n := 0; n <= len(s); n++ {
				comparePeekShape(t, []byte(s[:n]), PeekConfig{MaxDepth: depth})
			}
		}
	}
	// With a memo (PeekConfig.Memo), of the message itself and of each
	// other seed, and with what one seed left in it for the next.
	var env Envelope
	for _, depth := range []int{0, 3, 4} {
		chain := PeekConfig{MaxDepth: depth, Memo: new(PeekMemo)}
		for _, s := range seeds {
			for _, prev := range seeds {
				o := PeekConfig{MaxDepth: depth, Memo: new(PeekMemo)}
				PeekWith([]byte(prev), &env, o)
				comparePeekShape(t, []byte(s), o)
			}
			for n := 0; n <= len(s); n++ {
				comparePeekShape(t, []byte(s[:n]), chain)
			}
		}
	}
}

// TestPeekMemoUsed: a memo is filled by the usual shape and used by the
// next message that repeats it; a message whose _meta starts differently
// is read, and replaces it.
func TestPeekMemoUsed(t *testing.T) {
	var env Envelope
	memo := new(PeekMemo)
	o := PeekConfig{Memo: memo}
	if err := PeekWith([]byte(fixture), &env, o); err != nil || memo.n == 0 {
		t.Fatalf("fixture: %v, memo of %d bytes", err, memo.n)
	}
	want := string(memo.b[metaAt : metaAt+memo.n])
	if !strings.HasPrefix(want, `"io.modelcontextprotocol/protocolVersion":"2026-07-28",`) || !strings.HasSuffix(want, `"io.modelcontextprotocol/clientCapabilities":{}`) {
		t.Fatalf("memo %q", want)
	}
	// A hit takes the spans from the memo: one moved by hand shows.
	other := strings.Replace(fixture, `"progressToken":1`, `"progressToken":"t"`, 1)
	memo.at[1]--
	if err := PeekWith([]byte(other), &env, o); err != nil || string(env.ProgressToken) != `"t"` || env.ProtocolVersion.String() != "2026-07-2" {
		t.Fatalf("hit: %v %q %q", err, env.ProgressToken, env.ProtocolVersion.Raw)
	}
	memo.at[1]++
	if err := PeekWith([]byte(other), &env, o); err != nil || env.ProtocolVersion.String() != "2026-07-28" || string(env.ClientInfo) != `{"name":"wrk","version":"1"}` {
		t.Fatalf("hit: %v %q %q", err, env.ProtocolVersion.Raw, env.ClientInfo)
	}
	changed := strings.Replace(fixture, `"wrk"`, `"curl"`, 1)
	if err := PeekWith([]byte(changed), &env, o); err != nil || string(env.ClientInfo) != `{"name":"curl","version":"1"}` {
		t.Fatalf("miss: %v %q", err, env.ClientInfo)
	}
	if got := string(memo.b[metaAt : metaAt+memo.n]); !strings.Contains(got, `"curl"`) {
		t.Fatalf("memo not replaced: %q", got)
	}
}

// TestPeekLine: PeekLine takes a compact message in the usual shape that
// ends at a "\n" or "\r\n", and declines (-1) anything whose line end it
// cannot prove from its walk: whitespace anywhere (a '\n' may hide in
// it), another shape, an error, no '\n' yet.
func TestPeekLine(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`
	for i, tc := range []struct {
		buf  string
		want int // -1: declined
	}{
		{fixture + "\n", len(fixture)},
		{fixture + "\r\n", len(fixture) + 1},
		{strings.Replace(fixture, `{"text":"hello world"}`, `{}`, 1) + "\n", len(fixture) - 20},
		{strings.Replace(fixture, `{"text":"hello world"}`, `{"a":1,"b":true,"c":"x","d":null}`, 1) + "\n", len(fixture) + 11},
		{strings.Replace(fixture, `{"text":"hello world"}`, `{"a":1,"b":true,"c":"x","d":null,"e":2}`, 1) + "\n", len(fixture) + 17},
		{strings.Replace(fixture, `{"text":"hello world"}`, "{\"a\":1,\"b\":true,\"c\":\"x\",\"d\":null,\"e\":2\n}", 1) + "\n", -1},
		{strings.Replace(fixture, `{"text":"hello world"}`, "{\"a\":1,\"b\":true\n,\"c\":\"x\"}", 1) + "\n", -1},
		{strings.Replace(fixture, `clientCapabilities":{}`, "clientCapabilities\":{\"a\":1\n}", 1) + "\n", -1},
		{fixture + "\n" + fixture + "\n", len(fixture)},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + fixture, 54},
		// The same alone: its last string ends within 8 bytes of the
		// buffer's end, where plainString gives up; the object loop reads
		// it on the line.
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", 54},
		// Leaving the shape (nested arguments, _meta in another order,
		// whitespace between members): the object loop goes on on the line.
		{strings.Replace(fixture, `{"text":"hello world"}`, `{"text":"hello world","o":{"a":[1]}}`, 1) + "\n" + fixture, len(fixture) + 14},
		{strings.Replace(fixture, `"io.modelcontextprotocol/protocolVersion":"2026-07-28",`, ``, 1) + "\n" + fixture, len(fixture) - 55},
		{fixture + `,"x":1}` + "\n", -1}, // more after the message
		// _meta first, left to the object loop (cut at its start), then the
		// readers go on in the whole buffer, where skipArgs steps over the
		// '\n': the end is past the line's, declined.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"x":1},"name":"echo","arguments":{"a"` + "\n" + `:1}}}` + "\n", -1},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"x":1},"name":"echo","arguments":{"a":1}}}` + "\n" + fixture, 107},
		{strings.Replace(fixture, `"method":"tools/call",`, `"method":"tools/call" ,`, 1) + " \r\n", len(fixture) + 3},
		{strings.Replace(fixture, `"method":"tools/call",`, `"method":"tools/call" ,`, 1) + "\n" + fixture, len(fixture) + 1},
		{strings.Replace(fixture, `"method":"tools/call",`, `"method":"tools/call" ,`, 1), -1}, // no '\n' yet
		{strings.Replace(fixture, `"method":"tools/call",`, "\"method\":\"tools/call\"\n,", 1) + "\n", -1},
		{fixture, -1},             // no '\n' yet
		{fixture + "\r", -1},      // nor here
		{fixture + "\rx\n", -1},   // a '\r' that is not before the '\n'
		{fixture + "\r\r\n", -1},  // nor here
		{fixture + " \n", -1},     // whitespace after the message
		{fixture[:40] + "\n", -1}, // a truncated line
		{`{"id":1,"jsonrpc":"2.0","method":"m"}` + "\n", -1}, // another order
		{strings.Replace(fixture, `"2.0"`, `"1.0"`, 1) + "\n", -1},
		{strings.Replace(fixture, `"jsonrpc":"2.0","id":1,`, `"jsonrpc":"2.0","id":null,`, 1) + "\n", -1},
		{strings.Replace(fixture, `}}}`, `}}}}`, 1) + "\n", -1},
		// A '\n' as whitespace inside the flat objects the walk skips: the
		// line ends there, so it must not be taken as one message.
		{strings.Replace(fixture, `{"text":"hello world"}`, "{\"text\"\n:\"hello world\"}", 1) + "\n", -1},
		{strings.Replace(fixture, `{"text":"hello world"}`, "{\"text\":\"hello world\"\n}", 1) + "\n", -1},
		{strings.Replace(fixture, `{"name":"wrk","version":"1"}`, "{\"name\":\"wrk\"\n,\"version\":\"1\"}", 1) + "\n", -1},
		{strings.Replace(fixture, `{"name":"wrk","version":"1"}`, "{\"name\"\n:\"wrk\",\"version\":\"1\"}", 1) + "\n", -1},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{"a":1}}}` + "\n", 288},
	} {
		var env Envelope
		if got := PeekLine([]byte(tc.buf), &env, PeekConfig{}); got != tc.want {
			t.Errorf("%d: PeekLine(%q) = %d, want %d", i, tc.buf, got, tc.want)
		}
	}
}

// TestPeekLineArgsWhitespace: skipArgs takes whitespace before a ':' or
// a separator, which may be a '\n' that ends the line inside the
// arguments; PeekLine checks the arguments it took (compactArgs, and its
// test for one member written out in PeekLine). Each place skipArgs may
// take it, with one member and with more, read by params (no template)
// and by replay (the fixture's template): a '\n' there is declined, a
// ' ' in recorded arguments declined too (they are not compact), a ' '
// in five members (not recorded) taken.
func TestPeekLineArgsWhitespace(t *testing.T) {
	args := `{"text":"hello world"}`
	five := `{"a":1,"b":true,"c":"x","d":null,"e":2}`
	for i, tc := range []struct {
		args string
		take bool
	}{
		{args, true},
		{five, true},
		{`{"n":1,"text":"x"}`, true},
		{`{"n":1` + "\n" + `}`, false},
		{`{"n":1}`, true},
		{`{"text"` + "\n" + `:"hello world"}`, false},
		{`{"text":"hello world"` + "\n" + `}`, false},
		{`{"text":"x"` + "\n" + `,"n":1}`, false},
		{`{"text" :"hello world"}`, false},
		{`{"text":"hello world" }`, false},
		{`{"text":"x" ,"n":1}`, false},
		{`{"a":1,"b":true,"c":"x","d":null,"e"` + "\n" + `:2}`, false},
		{`{"a":1,"b":true,"c":"x","d":null,"e":2` + "\n" + `}`, false},
		{`{"a":1,"b":true,"c":"x","d":null` + "\n" + `,"e":2}`, false},
		{`{"a":1,"b":true,"c":"x","d":null,"e" :2}`, true},
		{`{"a":1,"b":true,"c":"x","d":null,"e":2 }`, true},
	} {
		msg := strings.Replace(strings.Replace(fixture, `"id":1`, `"id":77`, 1), args, tc.args, 1)
		for _, tmpl := range []bool{false, true} {
			memo := new(PeekMemo)
			var env Envelope
			if tmpl {
				if err := PeekWith([]byte(fixture), &env, PeekConfig{Memo: memo}); err != nil || memo.an == 0 {
					t.Fatalf("fixture: %v, template %d", err, memo.an)
				}
			}
			want := -1
			if tc.take {
				want = len(msg)
			}
			if n := PeekLine([]byte(msg+"\n"), &env, PeekConfig{Memo: memo}); n != want {
				t.Errorf("%d (template %v): PeekLine(%q) = %d, want %d", i, tmpl, msg, n, want)
			}
			if tmpl && env.Template() == 0 {
				t.Errorf("%d: %q not taken by the template", i, msg)
			}
		}
	}
}

// TestPeekLineMemo: a PeekMemo keeps no params._meta with a '\n' in it
// (as whitespace in clientInfo), which PeekLine would take unread through
// the line's end; PeekLine fills one that the next line then uses.
func TestPeekLineMemo(t *testing.T) {
	msg := strings.Replace(fixture, `{"name":"wrk","version":"1"}`, "{\"name\":\"wrk\"\n,\"version\":\"1\"}", 1)
	var m PeekMemo
	var env Envelope
	if err := PeekWith([]byte(msg), &env, PeekConfig{Memo: &m}); err != nil || m.n != 0 {
		t.Fatalf("PeekWith: %v, memo of %d bytes", err, m.n)
	}
	buf := []byte(msg + "\n")
	if n := PeekLine(buf, &env, PeekConfig{Memo: &m}); n != -1 {
		t.Fatalf("PeekLine took %d bytes through a remembered '\\n'", n)
	}
	line := []byte(fixture + "\n")
	for j := range 2 {
		if n := PeekLine(line, &env, PeekConfig{Memo: &m}); n != len(fixture) {
			t.Fatalf("read %d: PeekLine = %d, want %d", j, n, len(fixture))
		}
		if m.n == 0 {
			t.Fatalf("read %d: no memo", j)
		}
		if string(env.ProgressToken) != "1" || string(env.ClientInfo) != `{"name":"wrk","version":"1"}` {
			t.Fatalf("read %d: %+v", j, env)
		}
	}
}

// TestPeekTemplateUsed: a memo learns the template of a message read
// straight through (learn) and replays it on the next that repeats its
// stretches with another id, arguments and progressToken; a message that
// does not repeat them is read in full, and replaces the template when
// it is read straight through.
func TestPeekTemplateUsed(t *testing.T) {
	memo := new(PeekMemo)
	o := PeekConfig{Memo: memo}
	var env Envelope
	if err := PeekWith([]byte(fixture), &env, o); err != nil || memo.an == 0 || !memo.tok {
		t.Fatalf("fixture: %v, template of %d bytes (token %v)", err, memo.an, memo.tok)
	}
	if a := string(memo.t[:memo.an]); a != `,"method":"tools/call","params":{"name":"echo","arguments":{` {
		t.Fatalf("stretch %q", a)
	}
	// Another id, arguments and token: replayed. An offset moved by
	// hand shows in what is recorded.
	next := strings.NewReplacer(`"id":1`, `"id":"r-42"`, `{"text":"hello world"}`, `{"text":"x","n":7}`, `"progressToken":1`, `"progressToken":42`).Replace(fixture)
	memo.tat[2]--
	if err := PeekWith([]byte(next), &env, o); err != nil || string(env.Name.Raw) != "ech" {
		t.Fatalf("replay with a moved offset: %v, name %q", err, env.Name.Raw)
	}
	memo.tat[2]++
	for _, line := range []bool{false, true} {
		msg := []byte(next + "\n")
		var got, want Envelope
		if line {
			if n := PeekLine(msg, &got, o); n != len(next) || memo.an == 0 {
				t.Fatalf("PeekLine: %d, template %d", n, memo.an)
			}
		} else if err := PeekWith(msg[:len(next)], &got, o); err != nil || memo.an == 0 {
			t.Fatalf("PeekWith: %v, template %d", err, memo.an)
		}
		if err := PeekWith(msg[:len(next)], &want, PeekConfig{Memo: genericPeek}); err != nil {
			t.Fatal(err)
		}
		if a, b := spansOf(msg, &got), spansOf(msg, &want); a != b {
			t.Fatalf("line %v:\n got %+v\nwant %+v", line, a, b)
		}
	}
	// Another tool: a miss, read in full; the template is kept after
	// one miss, replaced after a second in a row.
	other := strings.Replace(fixture, `"echo"`, `"add"`, 1)
	for j, want := range []string{`"echo"`, `"add"`} {
		if err := PeekWith([]byte(other), &env, o); err != nil || string(env.Name.Raw) != "add" {
			t.Fatalf("other tool: %v, %q", err, env.Name.Raw)
		}
		if a := string(memo.t[:memo.an]); !strings.Contains(a, want) {
			t.Fatalf("after %d misses: template %q", j+1, a)
		}
	}
	// Nested arguments: misses after the first stretch; the template is
	// forgotten after two, and not learned from a message the readers
	// leave.
	nested := strings.Replace(other, `{"text":"hello world"}`, `{"text":{"a":1}}`, 1)
	for j := range 2 {
		if err := PeekWith([]byte(nested), &env, o); err != nil || string(env.Arguments) != `{"text":{"a":1}}` || (memo.an != 0) != (j == 0) {
			t.Fatalf("nested, read %d: %v, %q, template %d", j, err, env.Arguments, memo.an)
		}
	}
	// A client whose requests do not repeat: a template forgotten
	// without a hit makes learn pass over the next messages, a number
	// that doubles each time.
	memo.an, memo.wait, memo.skip = 0, 0, 0
	var learned []int
	for j := range 40 {
		msg := strings.Replace(fixture, `"echo"`, fmt.Sprintf(`"t%d"`, j), 1)
		if err := PeekWith([]byte(msg), &env, o); err != nil {
			t.Fatal(err)
		}
		if memo.an != 0 && strings.Contains(string(memo.t[:memo.an]), fmt.Sprintf(`"t%d"`, j)) {
			learned = append(learned, j)
		}
	}
	if fmt.Sprint(learned) != "[0 3 8 17 34]" {
		t.Fatalf("learned from %v", learned)
	}
	memo.an = 0
	memo.wait, memo.skip = 0, 0
	// Without a progressToken: a template that ends at clientCapabilities.
	noTok := strings.Replace(fixture, `,"progressToken":1`, ``, 1)
	for range 2 {
		if err := PeekWith([]byte(noTok), &env, o); err != nil || memo.an == 0 || memo.tok || env.ProgressToken != nil {
			t.Fatalf("no token: %v, template %d (token %v), %q", err, memo.an, memo.tok, env.ProgressToken)
		}
	}
}

// TestPlainRequest: PeekWith and PeekLine take plainRequest's answer
// instead of finish's; on every combination of what the readers record
// that finish looks at (the problem bits, the id's kind, result, error),
// plainRequest may only say yes where finish makes the message a request
// without an error.
func TestPlainRequest(t *testing.T) {
	yes := 0
	for bad := range 1 << 6 {
		for kind := IDNone; kind <= IDInvalid; kind++ {
			for re := range 4 {
				env := Envelope{IDKind: kind, HasResult: re&1 != 0, HasError: re&2 != 0}
				p := parser{env: &env, bad: uint8(bad)}
				if !p.plainRequest() {
					continue
				}
				yes++
				if err := p.finish(); err != nil || env.Kind != KindRequest {
					t.Errorf("bad %06b, id %v, result/error %02b: plainRequest, but finish gives %v, %v", bad, kind, re, err, env.Kind)
				}
			}
		}
	}
	if yes == 0 {
		t.Fatal("plainRequest never took a request")
	}
}

// TestReplayEnd: replay takes a message by its template only when it
// ends with "}}}" right after the progressToken (or the _meta's kept
// start); any other byte at any of the three places is read in full, as
// the object loop reads it (whitespace there is valid JSON).
func TestReplayEnd(t *testing.T) {
	for _, tail := range []string{"}}}", "} }}", "}} }", " }}}", "}\n}}", "}}]", "}]}", "]}}", "}}", "}}}}", "},}}"} {
		for _, tok := range []string{`,"progressToken":1`, ``} {
			msg := strings.Replace(strings.Replace(fixture, `,"progressToken":1`, tok, 1), "}}}", tail, 1)
			memo := new(PeekMemo)
			var env Envelope
			learn := strings.Replace(fixture, `,"progressToken":1`, tok, 1)
			if err := PeekWith([]byte(learn), &env, PeekConfig{Memo: memo}); err != nil || memo.an == 0 {
				t.Fatalf("%q: %v, template %d", learn, err, memo.an)
			}
			got, err := comparePeekShapeOnce(t, []byte(msg), PeekConfig{Memo: memo})
			if hit := got.Template() != 0; hit != (tail == "}}}") || hit && err != nil {
				t.Errorf("%q: template %d, %v", msg, got.Template(), err)
			}
		}
	}
}

// TestIDNumber: PeekWith reads the id by oneDigit, then idWord (where 8
// bytes are left), then idValue, PeekLine by the last two: idWord, when
// it answers, and idValue must give what plainNumber gives (idWord must
// answer for 1 to 6 digits plainNumber takes but 0), or for a '"' what
// plainString gives: on every run of digits (leading zeros too) ended by
// every byte value, at several starts and buffer ends, on string ids,
// and on random bytes from the characters that end or spoil a number.
func TestIDNumber(t *testing.T) {
	check := func(b []byte, i int) {
		t.Helper()
		want, wkind := plainNumber(b, i), IDNumber
		if want < 0 && i < len(b) && b[i] == '"' {
			want, wkind = plainString(b, i+1), IDString
		}
		if got, kind := idValue(b, i); got != want || kind != wkind {
			t.Fatalf("idValue(%q, %d) = %d %v, plainNumber or plainString %d %v", b, i, got, kind, want, wkind)
		}
		if oneDigit(b, i) && want != i+1 {
			t.Fatalf("oneDigit(%q, %d), plainNumber %d", b, i, want)
		}
		if i+8 <= len(b) {
			if got := idWord(b, i); got >= 0 && (got != want || wkind != IDNumber) {
				t.Fatalf("idWord(%q, %d) = %d, plainNumber %d", b, i, got, want)
			} else if got < 0 && want-i >= 1 && want-i <= 6 && wkind == IDNumber && (want-i > 1 || b[i] != '0') {
				t.Fatalf("idWord(%q, %d) = %d, plainNumber %d (1 to 6 digits)", b, i, got, want)
			}
		}
	}
	for _, run := range []string{"", "0", "1", "9", "00", "01", "10", "99", "123", "0123", "65535", "1234567", "12345678", "123456789", "000000000", "100000001", "0123456789", "12345678901234", "123456789012345", "1234567890123456", "12345678901234567890"} {
		for c := range 256 {
			for i := range 3 {
				for pad := range 9 {
					b := []byte(strings.Repeat("x", i) + run + string([]byte{byte(c)}) + strings.Repeat("}", pad))
					check(b, i)
					check(b[:len(b)-pad], i) // the byte after the digits ends the buffer
					check(b[:i+len(run)], i) // the digits end it
				}
			}
		}
	}
	for _, id := range []string{`"a"`, `"req-1"`, `""`, `"a\"b"`, `"\u0041"`, `"12"`, "\"\xff\"", `"a`} {
		for pad := range 12 {
			b := []byte(id + strings.Repeat("}", pad))
			check(b, 0)
			check(append([]byte("xx"), b...), 2)
		}
	}
	alpha := []byte("0123456789.eE+-,}\" \x00\x7f\x80\xb0\xb9/:")
	r := uint64(1)
	for range 200000 {
		r = r*6364136223846793005 + 1442695040888963407
		n := int(r>>59) % 14
		b := make([]byte, n)
		for j := range b {
			r = r*6364136223846793005 + 1442695040888963407
			b[j] = alpha[int(r>>33)%len(alpha)]
		}
		for i := range min(n, 3) {
			check(b, i)
		}
	}
}

// TestReplayWritesEveryField: on a hit of the memo's template, top does
// not clear the envelope and replay writes every field, those a template
// never sets as the clear would leave them. So PeekWith and PeekLine
// into an envelope that holds junk in every field, unexported ones too,
// must leave it equal (reflect.DeepEqual: every word, the recorded
// members past the last too) to what they leave in a fresh one. The
// messages: the fixture with and without its progressToken, with `{}`,
// two and five arguments (five are not recorded), a string id, an id of
// five digits.
func TestReplayWritesEveryField(t *testing.T) {
	junk := func() Envelope {
		var e Envelope
		dirtyEnvelope(&e)
		e.tmpl = 77
		v := reflect.ValueOf(e)
		for j := range v.NumField() {
			if v.Field(j).IsZero() {
				// A new field: dirtyEnvelope must set it, and replay
				// must write it (a hit does not clear the envelope).
				t.Fatalf("dirtyEnvelope leaves %s zero", v.Type().Field(j).Name)
			}
		}
		return e
	}
	tok := `,"progressToken":1`
	for _, msg := range []string{
		fixture,
		strings.Replace(fixture, tok, ``, 1),
		strings.Replace(fixture, tok, `,"progressToken":"tok-1"`, 1),
		strings.Replace(fixture, `{"text":"hello world"}`, `{}`, 1),
		strings.Replace(fixture, `{"text":"hello world"}`, `{"text":"hello","n":12}`, 1),
		strings.Replace(fixture, `{"text":"hello world"}`, `{"a":1,"b":2,"c":3,"d":4,"e":5}`, 1),
		strings.Replace(fixture, `"id":1`, `"id":"req-1"`, 1),
		strings.Replace(fixture, `"id":1`, `"id":65535`, 1),
	} {
		for _, line := range []bool{false, true} {
			memo := new(PeekMemo)
			o := PeekConfig{Memo: memo}
			b := []byte(msg + "\n")
			read := func(env *Envelope) {
				t.Helper()
				if line {
					if n := PeekLine(b, env, o); n != len(msg) {
						t.Fatalf("%q: PeekLine %d", msg, n)
					}
				} else if err := PeekWith(b[:len(msg)], env, o); err != nil {
					t.Fatalf("%q: %v", msg, err)
				}
			}
			var first Envelope
			read(&first) // learns the template
			if memo.an == 0 {
				t.Fatalf("%q: no template learned", msg)
			}
			var fresh Envelope
			read(&fresh)
			dirty := junk()
			read(&dirty)
			if fresh.Template() == 0 || dirty.Template() != fresh.Template() {
				t.Fatalf("%q (line %v): template %d and %d, want a hit", msg, line, fresh.Template(), dirty.Template())
			}
			if !reflect.DeepEqual(dirty, fresh) {
				t.Errorf("%q (line %v): a hit into a used envelope; fields that differ: %v", msg, line, envDiff(&dirty, &fresh))
			}
			first.tmpl = fresh.tmpl
			if !reflect.DeepEqual(first, fresh) {
				t.Errorf("%q (line %v): the hit and the read that learned; fields that differ: %v", msg, line, envDiff(&fresh, &first))
			}
		}
	}
}

// TestPeekWithDirtyEnvelope: PeekWith into an envelope holding junk in
// every field leaves it as it leaves a fresh one, on every path: top
// (which clears it, or replay writes every field), and the others, which
// PeekWith clears itself (leading whitespace, another first member, a
// batch, a scalar, nothing, an error), with and without a memo and its
// template.
func TestPeekWithDirtyEnvelope(t *testing.T) {
	msgs := []string{fixture, " " + fixture, "\n" + fixture, "", " ", "[1]", "7", `"s"`, "{", "{}",
		`{"id":1,"jsonrpc":"2.0","method":"m"}`, `{"jsonrpc":"2.0","method":"m","id":2}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"method":"m"} x`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[]}`, `{"jsonrpc":"2.0","id":[],"method":"m"}`,
		`{"jsonrpc":"2.0","id":"\u0041","method":"m"}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}",
		strings.Replace(fixture, `"id":1`, `"id":"req-1"`, 1), strings.Replace(fixture, `"id":1`, `"id":01`, 1)}
	for _, memo := range []bool{false, true} {
		for _, msg := range msgs {
			var m1, m2 *PeekMemo
			if memo {
				m1, m2 = new(PeekMemo), new(PeekMemo)
				var scratch Envelope
				PeekWith([]byte(fixture), &scratch, PeekConfig{Memo: m1}) // learns the fixture's template
				PeekWith([]byte(fixture), &scratch, PeekConfig{Memo: m2})
			}
			var fresh, dirty Envelope
			dirtyEnvelope(&dirty)
			dirty.tmpl = 77
			b := []byte(msg)
			err1 := PeekWith(b, &fresh, PeekConfig{Memo: m1})
			err2 := PeekWith(b, &dirty, PeekConfig{Memo: m2})
			fresh.tmpl, dirty.tmpl = 0, 0 // the two memos' generations differ
			if err1 != err2 || !reflect.DeepEqual(dirty, fresh) {
				t.Errorf("%q (memo %v): into a used envelope %v, fresh %v; fields that differ: %v", msg, memo, err2, err1, envDiff(&dirty, &fresh))
			}
		}
	}
}

// envDiff names the fields of a and b that are not deeply equal.
func envDiff(a, b *Envelope) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var d []string
	for j := range va.NumField() {
		x, y := va.Field(j), vb.Field(j)
		if !reflect.DeepEqual(reflect.NewAt(x.Type(), x.Addr().UnsafePointer()).Elem().Interface(),
			reflect.NewAt(y.Type(), y.Addr().UnsafePointer()).Elem().Interface()) {
			d = append(d, va.Type().Field(j).Name)
		}
	}
	return d
}

// TestReplayLateMiss: replay writes the fields that depend on the
// template alone (ID, Method, Name, …) before it reads the arguments and
// the _meta. A message that keeps the template's first stretch and
// leaves it later must still read as with no memo, into an envelope
// that held anything (top clears what replay wrote), by PeekWith and by
// PeekLine.
func TestReplayLateMiss(t *testing.T) {
	tok := `,"progressToken":1`
	args := `{"text":"hello world"}`
	for _, msg := range []string{
		strings.Replace(fixture, args, `{"text":{"a":1}}`, 1),            // skipArgs refuses it
		strings.Replace(fixture, args, `{"text":"a\"b"}`, 1),             // an escape
		strings.Replace(fixture, args, `{"text" : "hello world"}`, 1),    // whitespace
		strings.Replace(fixture, args, `[1]`, 1),                         // not an object
		strings.Replace(fixture, `"2026-07-28"`, `"2025-06-18"`, 1),      // another _meta
		strings.Replace(fixture, `"name":"wrk"`, `"name":"wrk2"`, 1),     // another clientInfo
		strings.Replace(fixture, tok, ``, 1),                             // no token
		strings.Replace(fixture, tok, `,"progressToken":true`, 1),        // a token of another type
		strings.Replace(fixture, tok, `,"progressToken":1.5`, 1),         // a fraction
		strings.Replace(fixture, `}}}`, `},"x":1}}`, 1),                  // more params
		strings.Replace(fixture, `}}}`, `}},"x":1}`, 1),                  // more members at the top
		strings.Replace(fixture, `}}}`, `}}}}`, 1),                       // trailing bytes
		strings.Replace(fixture, `"id":1`, `"id":"x"`, 1)[:len(fixture)], // cut short
		// Messages that leave it at once (sameWords).
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"method":1,"params":{}}`,
		strings.Replace(fixture, `tools/call`, `tools/list`, 1),
	} {
		for _, line := range []bool{false, true} {
			memo := new(PeekMemo)
			var scratch Envelope
			if err := PeekWith([]byte(fixture), &scratch, PeekConfig{Memo: memo}); err != nil || memo.an == 0 {
				t.Fatalf("fixture: %v, template %d bytes", err, memo.an)
			}
			var want, got Envelope
			dirtyEnvelope(&got)
			got.tmpl = 77
			b := []byte(msg + "\n")
			if line {
				n := PeekLine(b, &got, PeekConfig{Memo: memo})
				if n < 0 {
					continue // declined: the caller then calls PeekWith
				}
				wn := PeekLine(b, &want, PeekConfig{})
				if n != wn {
					t.Fatalf("%q: PeekLine %d, with no memo %d", msg, n, wn)
				}
			} else {
				err := PeekWith(b[:len(msg)], &got, PeekConfig{Memo: memo})
				werr := PeekWith(b[:len(msg)], &want, PeekConfig{})
				if err != werr {
					t.Fatalf("%q: PeekWith %v, with no memo %v", msg, err, werr)
				}
			}
			if got.Template() != 0 {
				t.Errorf("%q (line %v): taken by the template (%d)", msg, line, got.Template())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q (line %v): after a late miss, fields that differ from a read with no memo: %v", msg, line, envDiff(&got, &want))
			}
		}
	}
}

// TestSameWords compares sameWords with a plain compare: every length
// from 8 to 160, at three offsets, equal and with each byte changed.
func TestSameWords(t *testing.T) {
	src := make([]byte, 200)
	for j := range src {
		src[j] = byte(j*7 + 3)
	}
	for n := 8; n <= 160; n++ {
		for _, at := range []int{0, 1, 13} {
			b := make([]byte, at+n)
			copy(b[at:], src)
			q := src[:n]
			p := unsafe.Pointer(&b[at])
			if !sameWords(p, unsafe.Pointer(&q[0]), n) {
				t.Fatalf("n %d at %d: equal bytes differ", n, at)
			}
			for j := range n {
				b[at+j] ^= 0x40
				if sameWords(p, unsafe.Pointer(&q[0]), n) {
					t.Fatalf("n %d at %d: byte %d changed, still the same", n, at, j)
				}
				b[at+j] ^= 0x40
			}
		}
	}
}

// TestShapeWords checks the constant words against the strings they
// stand for, and version20 against a plain prefix test.
func TestShapeWords(t *testing.T) {
	head := shapeJSONRPC + `,"id":`
	if w := word([]byte(shapeJSONRPC), 0); w != shapeV20w0 {
		t.Errorf("shapeV20w0 %#x, want %#x", shapeV20w0, w)
	}
	if w := word([]byte(shapeJSONRPC), 8); w != shapeV20w1 {
		t.Errorf("shapeV20w1 %#x, want %#x", shapeV20w1, w)
	}
	if w := word([]byte(head), len(head)-8); w != shapeHeadLast || w != shapeHead.last {
		t.Errorf("shapeHeadLast %#x, want %#x", shapeHeadLast, w)
	}
	for _, c := range []struct{ n, want int }{
		{shapeMethodLen, shapeMethod.n}, {shapeParamsLen, shapeParams.n},
		{shapeMetaLen, shapeMeta.n}, {shapeProgressLen, shapeProgress.n},
	} {
		if c.n != c.want {
			t.Errorf("a pattern's length as a constant: %d, want %d", c.n, c.want)
		}
	}
	for n := 0; n <= len(fixture); n++ {
		b := []byte(fixture[:n])
		for j := -1; j < min(n, 20); j++ {
			if j >= 0 {
				b[j] ^= 0x01
			}
			if got, want := version20(b), strings.HasPrefix(string(b), shapeJSONRPC); got != want {
				t.Fatalf("%q: version20 %v, want %v", b, got, want)
			}
			if j >= 0 {
				b[j] ^= 0x01
			}
		}
	}
}

// TestReplayNotTried: PeekLine and PeekWith try the memo's template only
// for a message whose id they read where shapeHead puts it, a plain
// integer or string. Others (no id, an id of another kind) are not
// compared with it, so they charge it no miss: after any number of them
// the template still takes the fixture.
func TestReplayNotTried(t *testing.T) {
	notify := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	msgs := []string{
		notify,
		strings.Replace(fixture, `"id":1`, `"id":-1`, 1),
		strings.Replace(fixture, `"id":1`, `"id":1.5`, 1),
		strings.Replace(fixture, `"id":1`, `"id":1e3`, 1),
		strings.Replace(fixture, `"id":1`, `"id":null`, 1),
		strings.Replace(fixture, `"id":1`, `"id":"a\"b"`, 1),
		strings.Replace(fixture, `"id":1`, `"id":[1]`, 1),
		strings.Replace(fixture, `,"id":1`, ``, 1),
	}
	for _, line := range []bool{false, true} {
		memo := new(PeekMemo)
		o := PeekConfig{Memo: memo}
		var env Envelope
		read := func(msg string) {
			t.Helper()
			b := []byte(msg + "\n")
			if line {
				if n := PeekLine(b, &env, o); n < 0 {
					PeekWith(b[:len(msg)], &env, o) // the caller's fallback
				}
			} else {
				PeekWith(b[:len(msg)], &env, o)
			}
		}
		read(fixture) // learns the template
		gen := memo.gen
		if memo.an == 0 || gen == 0 {
			t.Fatalf("line %v: no template learned", line)
		}
		for range 3 {
			for _, msg := range msgs {
				read(msg)
				if memo.strike || memo.an == 0 {
					t.Fatalf("line %v: %q charged the template a miss (strike %v, template %d bytes)", line, msg, memo.strike, memo.an)
				}
			}
		}
		read(fixture)
		if env.Template() != gen {
			t.Errorf("line %v: the fixture after the others: template %d, want %d", line, env.Template(), gen)
		}
	}
}

// TestReplayToken reads the fixture with other progressToken values once
// its template (with a token) is learned: each read must be what a read
// with no memo gives, and taken by the template exactly when the token is
// one meta takes (a non-negative integer plainNumber takes; a string is
// taken only when plainString finds its end, 8 bytes or more before the
// buffer's: not checked). It holds replay's own read of the token's
// digits, whose "}}}" test stands for plainNumber's fraction and exponent
// tests.
func TestReplayToken(t *testing.T) {
	for _, tc := range []struct {
		tok   string
		taken bool // checked for a token that is not a string
	}{
		{`0`, true}, {`7`, true}, {`10`, true}, {`12345`, true}, {`1234567890123`, true},
		{`"abc"`, true}, {`"abcdefghij"`, true}, {`""`, true},
		{`01`, false}, {`00`, false}, {`007`, false}, {`1.5`, false}, {`0.5`, false},
		{`1e3`, false}, {`1E3`, false}, {`12e`, false}, {`-1`, false}, {`1 `, false},
		{`"a\"b"`, false}, {`"a`, false}, {`true`, false}, {`null`, false}, {`1x`, false},
	} {
		msg := strings.Replace(fixture, `"progressToken":1}`, `"progressToken":`+tc.tok+`}`, 1)
		for _, line := range []bool{false, true} {
			memo := new(PeekMemo)
			var scratch Envelope
			if err := PeekWith([]byte(fixture), &scratch, PeekConfig{Memo: memo}); err != nil || memo.an == 0 || !memo.tok {
				t.Fatalf("fixture: %v, template %d bytes, token %v", err, memo.an, memo.tok)
			}
			var want, got Envelope
			dirtyEnvelope(&got)
			b := []byte(msg + "\n")
			if line {
				n := PeekLine(b, &got, PeekConfig{Memo: memo})
				if wn := PeekLine(b, &want, PeekConfig{}); n != wn {
					t.Fatalf("%s: PeekLine %d, with no memo %d", tc.tok, n, wn)
				}
				if n < 0 {
					if tc.taken && tc.tok[0] != '"' {
						t.Errorf("%s: PeekLine declined", tc.tok)
					}
					continue
				}
			} else {
				err := PeekWith(b[:len(msg)], &got, PeekConfig{Memo: memo})
				if werr := PeekWith(b[:len(msg)], &want, PeekConfig{}); err != werr {
					t.Fatalf("%s: PeekWith %v, with no memo %v", tc.tok, err, werr)
				}
			}
			if (got.Template() != 0) != tc.taken && tc.tok[0] != '"' {
				t.Errorf("%s (line %v): template %d, want taken %v", tc.tok, line, got.Template(), tc.taken)
			}
			got.tmpl = 0
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (line %v): fields that differ from a read with no memo: %v", tc.tok, line, envDiff(&got, &want))
			}
		}
	}
}

// TestReplayKind: a hit of the template writes Kind (KindRequest) itself,
// and PeekWith and PeekLine then skip plainRequest and finish; any other
// read must not keep a Kind the envelope held before. Each message is
// read, with the fixture's template learned, into an envelope whose Kind
// is KindRequest (and junk elsewhere) and into a fresh one: the same
// answer and fields. It fails if top's clear kept Kind (no other test
// does: finish writes Kind on every path it runs).
func TestReplayKind(t *testing.T) {
	noID := strings.Replace(fixture, `"id":1,`, ``, 1)
	for _, msg := range []string{
		fixture,
		strings.Replace(fixture, `"id":1`, `"id":12345`, 1),
		noID, // a notification
		strings.Replace(fixture, `"id":1`, `"id":null`, 1),
		strings.Replace(fixture, `"id":1`, `"id":1.5`, 1),
		strings.Replace(fixture, `"tools/call"`, `7`, 1),
		strings.Replace(fixture, `}}}`, `},"result":{}}`, 1),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":1}`,
	} {
		for _, line := range []bool{false, true} {
			var m1, m2 *PeekMemo = new(PeekMemo), new(PeekMemo)
			var scratch Envelope
			PeekWith([]byte(fixture), &scratch, PeekConfig{Memo: m1})
			PeekWith([]byte(fixture), &scratch, PeekConfig{Memo: m2})
			var fresh, dirty Envelope
			dirtyEnvelope(&dirty)
			dirty.Kind = KindRequest
			b := []byte(msg + "\n")
			if line {
				n1 := PeekLine(b, &fresh, PeekConfig{Memo: m1})
				n2 := PeekLine(b, &dirty, PeekConfig{Memo: m2})
				if n1 != n2 {
					t.Errorf("%q: PeekLine %d into a used envelope, %d into a fresh one", msg, n2, n1)
				}
				if n1 < 0 {
					continue
				}
			} else {
				err1 := PeekWith(b[:len(msg)], &fresh, PeekConfig{Memo: m1})
				err2 := PeekWith(b[:len(msg)], &dirty, PeekConfig{Memo: m2})
				if err1 != err2 {
					t.Errorf("%q: PeekWith %v into a used envelope, %v into a fresh one", msg, err2, err1)
				}
			}
			if (fresh.tmpl != 0) != (msg == fixture || strings.Contains(msg, `"id":12345`)) {
				t.Errorf("%q (line %v): template %d", msg, line, fresh.tmpl)
			}
			fresh.tmpl, dirty.tmpl = 0, 0 // the two memos' generations differ
			if !reflect.DeepEqual(dirty, fresh) {
				t.Errorf("%q (line %v): fields that differ: %v", msg, line, envDiff(&dirty, &fresh))
			}
		}
	}
}
