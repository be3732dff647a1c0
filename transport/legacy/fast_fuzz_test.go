package legacy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// FuzzFastHeaders holds the fast path's header reading (fastHeaders, from
// fasthttp's raw block) to ServeHTTP's: whatever the fast path lets
// through, ServeHTTP would have served too — no duplicate of a once-only
// header (F2), a Content-Type mime.ParseMediaType takes for
// application/json, an Accept that accepts(), a served revision or none —
// with the same session id. (What it declines, ServeHTTP answers itself.)
func FuzzFastHeaders(f *testing.F) {
	for _, s := range []string{
		"Host: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: abc\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
		"Content-Type: Application/JSON\r\nmcp-session-id:  abc \r\n\r\n",
		"Content-Type: application/json\r\nAccept: text/html, */*\r\nMcp-Session-Id: abc\r\n\r\n",
		"Content-Type: application/json\r\nAccept: text/html\r\nMcp-Session-Id: abc\r\n\r\n",
		"Content-Type: application/json; charset=utf-8\r\nMcp-Session-Id: abc\r\n\r\n",
		"Content-Type: application/json\r\nMcp-Session-Id: a\r\nMcp-Session-Id: b\r\n\r\n",
		"Content-Type: application/json\r\nMcp-Session-Id: a\r\n folded\r\n\r\n",
		"Content-Type: application/json\r\nMcp-Session-Id: a\r\nMcp-Protocol-Version: 2026-07-28\r\n\r\n",
		"Content-Type: application/json\r\nAccept:\r\nMcp-Session-Id: a\r\n\r\n",
		"Content-Type: application/json\r\nAccept: text/html,text/event-stream\r\nMcp-Session-Id: a\r\n\r\n",
		"Content-Type: application/json\r\nAccept: text/html,,  Text/Event-Stream \r\nMcp-Session-Id: a\r\n\r\n",
		"Content-Type: application/json\r\nAccept: text/html, application/jsonx, */*x\r\nMcp-Session-Id: a\r\n\r\n",
		"Content-Type: application/json\r\nAccept: ,text/html\r\nMcp-Session-Id: a\r\n\r\n",
		"Content-Type: application/jsox\r\nMcp-Session-Id: a\r\n\r\n",
		"Content-Type: application/json\r\nAccept: application/json,text/html\r\nMcp-Session-Id: a\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var h, ref fastHeaders
		ok, refOK := h.scan(raw), ref.scanByLine(raw)
		if ok != refOK || ok && (!bytes.Equal(h.sid, ref.sid) || !bytes.Equal(h.ver, ref.ver) ||
			!bytes.Equal(h.ctype, ref.ctype) || !bytes.Equal(h.accept, ref.accept) || h.n != ref.n) {
			t.Fatalf("scan %v %+v, line by line %v %+v: %q", ok, h, refOK, ref, raw)
		}
		if ok && h.plain() != h.plainByCut() {
			t.Fatalf("plain %v, by bytes.Cut %v: %q", h.plain(), h.plainByCut(), raw)
		}
		if !ok || !h.plain() {
			return
		}
		// The same block as net/http holds it.
		hdr := http.Header{}
		for _, line := range bytes.Split(raw, []byte("\n")) {
			line = bytes.TrimSuffix(line, []byte("\r"))
			name, v, ok := bytes.Cut(line, []byte(":"))
			if !ok || len(name) == 0 {
				continue
			}
			hdr.Add(textproto.CanonicalMIMEHeaderKey(string(name)), string(bytes.Trim(v, " \t")))
		}
		if d := duplicateHeader(hdr); d != "" {
			t.Fatalf("fast path let a duplicate %s through: %q", d, raw)
		}
		req := &http.Request{Header: hdr}
		if got := hdr.Get(HeaderSession); got != string(h.sid) || got == "" {
			t.Fatalf("session id %q, ServeHTTP reads %q: %q", h.sid, got, raw)
		}
		if !contentTypeJSON(req) {
			t.Fatalf("fast path took a Content-Type ServeHTTP refuses: %q", raw)
		}
		if !accepts(req, "application/json", "text/event-stream") {
			t.Fatalf("fast path took an Accept ServeHTTP refuses: %q", raw)
		}
		if v := hdr.Get(HeaderProtocol); v != "" && !knownVersion([]byte(v)) {
			t.Fatalf("fast path took revision %q: %q", v, raw)
		}
	})
}

// plainByCut is plain as first written (each Accept part cut by
// bytes.Cut, every type compared by equalFoldASCII): the reference plain
// is held to.
func (h *fastHeaders) plainByCut() bool {
	if len(h.sid) == 0 || !equalFoldASCII(h.ctype, "application/json") {
		return false
	}
	if len(h.ver) > 0 && !knownVersion(h.ver) {
		return false
	}
	if h.n[3] == 0 || len(h.accept) == 0 {
		return true
	}
	for a := h.accept; len(a) > 0; {
		var part []byte
		part, a, _ = bytes.Cut(a, []byte{','})
		part = trimSpace(part)
		if equalFoldASCII(part, "application/json") || equalFoldASCII(part, "text/event-stream") || string(part) == "*/*" {
			return true
		}
	}
	return false
}

// scanByLine is scan as first written (each line cut, its name found at
// its first colon, the value trimmed by bytes.Trim): the reference the
// one-pass scan is held to.
func (h *fastHeaders) scanByLine(raw []byte) bool {
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			return false
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		i := -1
		for k, name := range fastNames {
			if bytes.EqualFold(line[:colon], []byte(name)) {
				i = k
			}
		}
		if i < 0 {
			continue
		}
		if !h.set(i, bytes.Trim(line[colon+1:], " \t")) {
			return false
		}
	}
	return true
}

// TestFastNamesOrder pins the order of fastNames: streamhttp's mount hands
// ServeFastFields the fields in the order of its mountFieldNames, the same
// list (its TestMountFieldNames).
func TestFastNamesOrder(t *testing.T) {
	if fastNames != [4]string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept"} {
		t.Fatalf("fastNames %q", fastNames)
	}
}

// BenchmarkFastHeaders is scan of the header block wrk sends to the
// legacy endpoint in make compare.
func BenchmarkFastHeaders(b *testing.B) {
	raw := []byte("Host: 127.0.0.1:18180\r\nContent-Length: 139\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: Jq5rlOnUV-hFA3DF4XHN7Q\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		var h fastHeaders
		if !h.scan(raw) || !h.plain() {
			b.Fatal("declined")
		}
	}
}

// FuzzFastRequest holds the fast path's reading of a body (codec.Peek in
// place, plainID, internMethod) to parse's: a body the fast path takes is
// one parse takes, with the same id, method and params.
func FuzzFastRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":100000001,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-12345678901234567,"method":"prompts/get","params":{"name":"p"}}`,
		`{"jsonrpc":"2.0","id":123456789012345678901,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
		` {"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://r"}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var env codec.Envelope
		if codec.Peek(body, &env) != nil || env.Kind != codec.KindRequest || env.Method.Escaped || !plainID(&env) {
			return
		}
		method := internMethod(env.Method.Raw)
		if method == "" {
			return
		}
		m, err := parse(body)
		if err != nil {
			t.Fatalf("fast path took a body parse refuses (%v): %q", err, body)
		}
		if !bytes.Equal(m.ID, env.ID) || m.Method != method || !bytes.Equal(bytes.TrimSpace(m.Params), env.Params) {
			t.Fatalf("fast path read id %s method %s params %s; parse %s %s %s", env.ID, method, env.Params, m.ID, m.Method, m.Params)
		}
	})
}

// FuzzCompleteResult holds completeResult, the prefix reading of the
// engine's responses (codec.AppendResponse: nothing follows the result),
// to what the engine wrote: it takes exactly the responses whose result
// begins as a complete one, returns that result unchanged, and takes no
// error response.
func FuzzCompleteResult(f *testing.F) {
	f.Add([]byte(`7`), []byte(`{"resultType":"complete","content":[],"_meta":{}}`))
	f.Add([]byte(`"a"`), []byte(`{"resultType":"complete","a":1}`))
	f.Add([]byte(`"a\",\"result\":{"`), []byte(`{"resultType":"input_required","inputRequests":{}}`))
	f.Add([]byte(`1`), []byte(`{"resultType":"complete"}`))
	f.Fuzz(func(t *testing.T, id, result []byte) {
		frame := codec.AppendResponse(nil, id, result)
		res, ok := completeResult(frame, id)
		want := bytes.HasPrefix(result, []byte(`{"resultType":"complete",`))
		if ok != want || ok && !bytes.Equal(res, result) {
			t.Fatalf("completeResult(%s) = %s, %v", frame, res, ok)
		}
		if _, ok := completeResult(codec.AppendErrorResponse(nil, id, codec.NewError(-32603, string(result))), id); ok {
			t.Fatalf("an error response taken for a result: id %s", id)
		}
	})
}

// FuzzDeriveEnvelope holds deriveEnvelope to codec.PeekWith: for a body
// the fast path takes and a session record (capabilities, client info,
// log level), whenever the envelope of the engine's message is derived
// from the body's rather than peeked, PeekWith of that message succeeds
// and gives the same envelope, every span at the same place in it.
func FuzzDeriveEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":100000001,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":null}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://r"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{},"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{ "_meta" : { "progressToken" : "t" } , "name":"e\u0063ho"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol\/logLevel":"x"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{},"result":1}`, // a result member the rebuilt message drops
	} {
		f.Add([]byte(s), []byte(`{"sampling":{}}`), []byte(`{"name":"t","version":"1"}`), "info")
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo"}}`), []byte(`{}`), []byte(nil), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo"}}`), []byte(`[1]`), []byte(`"x"`), "de\"bug")
	eng := engine.New(engine.Config{Logging: true})
	s := &Server{eng: eng, modern: engine.ProtocolVersion}
	f.Fuzz(func(t *testing.T, body, caps, info []byte, level string) {
		var src codec.Envelope
		if codec.PeekWith(body, &src, codec.PeekConfig{MaxDepth: eng.Config().MaxDepth}) != nil || src.Kind != codec.KindRequest ||
			src.Method.Escaped || !plainID(&src) || internMethod(src.Method.Raw) == "" {
			return
		}
		// A record holds what a decoder has checked: an initialize's
		// capabilities and clientInfo through codec.Unmarshal, the store's
		// record through json.Unmarshal, both of which refuse invalid JSON.
		// Bytes such as `{}},"x":{` cannot be in one, and spliced raw they
		// would close _meta early.
		if len(caps) > 0 && !json.Valid(caps) || len(info) > 0 && !json.Valid(info) {
			return
		}
		ss := &session{s: s, local: true, rec: record{Version: ProtocolVersion, Caps: caps, Info: info, Level: level}}
		var sp splice
		msg, err := ss.modern(nil, nil, src.ID, internMethod(src.Method.Raw), src.Params, nil, &src, &sp)
		// The splice takes the same bodies, and makes the same message, as
		// without the body's envelope (_meta looked up in params rather
		// than taken from src). (The map merge's member order may vary.)
		a, aok := ss.modernFast(nil, nil, src.ID, internMethod(src.Method.Raw), src.Params, &src, nil)
		b, bok := ss.modernFast(nil, nil, src.ID, internMethod(src.Method.Raw), src.Params, nil, nil)
		if aok != bok || !bytes.Equal(a, b) {
			t.Fatalf("splice with the body's envelope %s (%v), without %s (%v)", a, aok, b, bok)
		}
		if err != nil {
			return
		}
		var got, want codec.Envelope
		if !deriveEnvelope(&got, &src, msg, &sp) {
			return
		}
		if err := codec.PeekWith(msg, &want, codec.PeekConfig{MaxDepth: eng.Config().MaxDepth}); err != nil {
			t.Fatalf("derived an envelope for a message PeekWith refuses (%v): %s", err, msg)
		}
		sameSpan := func(field string, a, b []byte) {
			if (a == nil) != (b == nil) || a != nil && (offsetIn(msg, a) != offsetIn(msg, b) || len(a) != len(b) || offsetIn(msg, a) < 0) {
				t.Fatalf("%s: derived %q at %d, PeekWith %q at %d, in %s", field, a, offsetIn(msg, a), b, offsetIn(msg, b), msg)
			}
		}
		gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
		for i := range gv.NumField() {
			name := gv.Type().Field(i).Name
			if !gv.Type().Field(i).IsExported() {
				continue // codec's own; ScanArguments is compared below
			}
			switch g, w := gv.Field(i).Interface(), wv.Field(i).Interface(); g := g.(type) {
			case []byte:
				sameSpan(name, g, w.([]byte))
			case codec.Str:
				w := w.(codec.Str)
				sameSpan(name, g.Raw, w.Raw)
				if g.Escaped != w.Escaped || g.Present != w.Present {
					t.Fatalf("%s: derived %+v, PeekWith %+v, in %s", name, g, w, msg)
				}
			default:
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("%s: derived %v, PeekWith %v, in %s", name, g, w, msg)
				}
			}
		}
		names := []string{"text", "a", "b"}
		gvals, wvals := make([][]byte, len(names)), make([][]byte, len(names))
		gn, gerr := got.ScanArguments(names, gvals)
		wn, werr := want.ScanArguments(names, wvals)
		if gn != wn || gerr != werr || !reflect.DeepEqual(gvals, wvals) {
			t.Fatalf("ScanArguments: derived %d %v %q, PeekWith %d %v %q, in %s", gn, gerr, gvals, wn, werr, wvals, msg)
		}
	})
}

// The standard fixture's message is derived, not peeked again (the
// splice with the client's _meta, and without params' _meta or params),
// and matches PeekWith's envelope (FuzzDeriveEnvelope's check, on seeds).
func TestDeriveEnvelopeFixture(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":100000001,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`,
	} {
		eng := engine.New(engine.Config{Logging: true})
		s := &Server{eng: eng, modern: engine.ProtocolVersion}
		ss := &session{s: s, local: true, rec: record{Version: ProtocolVersion, Caps: []byte(`{"sampling":{}}`), Info: []byte(`{"name":"t"}`), Level: "info"}}
		var src codec.Envelope
		if err := codec.Peek([]byte(body), &src); err != nil {
			t.Fatal(err)
		}
		var sp splice
		msg, err := ss.modern(nil, nil, src.ID, internMethod(src.Method.Raw), src.Params, nil, &src, &sp)
		if err != nil {
			t.Fatal(err)
		}
		var got, want codec.Envelope
		if !deriveEnvelope(&got, &src, msg, &sp) {
			t.Fatalf("not derived: %s", body)
		}
		if err := codec.Peek(msg, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || offsetIn(msg, got.ProgressToken) != offsetIn(msg, want.ProgressToken) ||
			offsetIn(msg, got.ClientInfo) != offsetIn(msg, want.ClientInfo) {
			t.Fatalf("derived %+v\nPeekWith %+v\nof %s", got, want, msg)
		}
	}
}

// FuzzMayDropMembers: the result rewrite's look for members it must not
// copy (`"ttlMs"`, `"_meta"`, `"resultType"`, `"cacheScope"`, or a `\u`
// escape that may spell one) agrees with bytes.Contains of each.
func FuzzMayDropMembers(f *testing.F) {
	for _, s := range []string{
		`"content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false`,
		`"content":[],"ttlMs":5`, `"_meta":{}`, `"x":"M_"`, `"ttlMs"`, `_meta":`, `""ttlMs":"`, `M`, `_`, ``,
		`"a":"ttlMs":"_meta":`, `ttlMs":"ttlMs":`, `"content":[],"cacheScope":"x"`, `"resultType":"complete"`,
		`"TS":"resultType""cacheScope"`, `T`, `S`, `"cacheScope" :1`, `"\u0074tlMs":5`, `\\u`, `\`, `a\u`,
	} {
		f.Add([]byte(s))
	}
	pats := [][]byte{[]byte(`"ttlMs"`), []byte(`"_meta"`), []byte(`"resultType"`), []byte(`"cacheScope"`), []byte(`\u`)}
	f.Fuzz(func(t *testing.T, body []byte) {
		want := false
		for _, p := range pats {
			want = want || bytes.Contains(body, p)
		}
		if got := mayDropMembers(body); got != want {
			t.Fatalf("mayDropMembers(%q) = %v, bytes.Contains says %v", body, got, want)
		}
	})
}

// legacyServerMeta is a server _meta as the engine writes it, and
// legacyMetaTail the tail of a result that carries it (Server.metaTail).
const legacyServerMeta = `{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`

var legacyMetaTail = []byte(`,"_meta":` + legacyServerMeta)

// FuzzLegacyResultFastAgrees (COMPAT): for any handler result members, the
// rewrite's fast way (appendLegacyResult), when it takes the result, gives
// what the decoding way gives: the same members, the modern ones dropped.
func FuzzLegacyResultFastAgrees(f *testing.F) {
	for _, s := range []string{
		`"content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false`,
		`"content":[],"cacheScope":"private"`, `"content":[],"resultType":"complete"`, `"content":[],"ttlMs":5`,
		`"content":[{"type":"text","text":"\"cacheScope\":"}]`, `"a":{"cacheScope":1}`,
		`"content":[],"cacheScope" :"private"`, `"content":[],"resultType"  :"complete"`, `"content":[],"\u0074tlMs":5`,
		`"content":[],"cache\u0053cope":"private"`, `"content":[],"_meta" : {"x":1}`, `"t":"a\nb"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, members []byte) {
		raw := append([]byte(`{"resultType":"complete",`), members...)
		raw = append(append(raw, legacyMetaTail...), '}')
		if !json.Valid(raw) {
			return // the engine writes valid results only
		}
		fast, ok := appendLegacyResult(nil, raw, legacyMetaTail)
		if !ok {
			return
		}
		slow, err := legacyResultDecoded(raw)
		if err != nil {
			t.Fatalf("decoded way failed on %s: %v", raw, err)
		}
		a, err := decodeUseNumber(fast)
		if err != nil {
			t.Fatalf("fast way wrote %s: %v", fast, err)
		}
		b, err := decodeUseNumber(slow)
		if err != nil {
			t.Fatalf("decoded way wrote %s: %v", slow, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("of %s\nfast    %s\ndecoded %s", raw, fast, slow)
		}
	})
}

func decodeUseNumber(b []byte) (map[string]any, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return m, d.Decode(&m)
}

// TestLegacyResultDropsHandlersModernMembers (COMPAT): a handler's own
// top-level resultType or cacheScope is dropped for a 2025 client on the
// fast way too (it copied them through: mayDropMembers looked only for
// ttlMs and _meta), and the same names inside a value are kept.
func TestLegacyResultDropsHandlersModernMembers(t *testing.T) {
	for _, members := range []string{
		`"content":[],"cacheScope":"private"`,
		`"content":[],"resultType":"complete"`,
		`"content":[],"cacheScope" :"private"`,     // a handler's own encoding (Return of a RawMessage)
		`"content":[],"resultType"  :"complete"`,   // is copied as it is
		`"content":[],"cache\u0053cope":"private"`, // a name may be escaped
		`"content":[],"\u0072esultType":"complete"`,
	} {
		raw := []byte(`{"resultType":"complete",` + members + string(legacyMetaTail) + `}`)
		out, err := legacyResult(raw, legacyMetaTail)
		if err != nil {
			t.Fatal(err)
		}
		m, err := decodeUseNumber(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m["cacheScope"]; ok {
			t.Errorf("%s: cacheScope reached the 2025 client: %s", members, out)
		}
		if _, ok := m["resultType"]; ok {
			t.Errorf("%s: resultType reached the 2025 client: %s", members, out)
		}
	}
	raw := []byte(`{"resultType":"complete","content":[],"structuredContent":{"cacheScope":"x"}` + string(legacyMetaTail) + `}`)
	out, err := legacyResult(raw, legacyMetaTail)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeUseNumber(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := decodeUseNumber([]byte(`{"content":[],"structuredContent":{"cacheScope":"x"}}`))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nested member: got %s, want content and structuredContent.cacheScope", out)
	}
}

// equalFoldCases are pairs where a byte-wise fold goes wrong if it folds
// non-letters (@ and `, [ and {, - and CR differ by 0x20) or gives up on
// other lengths (the long s and the Kelvin sign fold to ASCII letters).
var equalFoldCases = []struct {
	b, s string
	want bool
}{
	0:  {"Mcp-Session-Id", "Mcp-Session-Id", true},
	1:  {"MCP-SESSION-ID", "Mcp-Session-Id", true},
	2:  {"mcp-session-id", "Mcp-Session-Id", true},
	3:  {"Mcp-Session\rId", "Mcp-Session-Id", false},
	4:  {"@ccept", "`ccept", false},
	5:  {"[a]", "{a}", false},
	6:  {"application/jſon", "application/json", true},
	7:  {"\u212aey", "key", true},
	8:  {"application/jso", "application/json", false},
	9:  {"Application/JSON", "application/json", true},
	10: {"application/js\xc5n", "application/json", false},
	11: {"", "", true},
}

func TestEqualFoldASCII(t *testing.T) {
	for i, tc := range equalFoldCases {
		if got := equalFoldASCII([]byte(tc.b), tc.s); got != tc.want {
			t.Errorf("%d: equalFoldASCII(%q, %q) = %v, want %v", i, tc.b, tc.s, got, tc.want)
		}
	}
	// Every length up to 40, each ASCII byte of s (letters, and their
	// neighbours 0x20 away) against every byte value at each place in b, the
	// rest of b s in mixed case: the word-wise compare agrees with
	// bytes.EqualFold at every position of a word, the overlapping last one
	// included.
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		for range 20 {
			sb := make([]byte, n)
			for i := range sb {
				sb[i] = byte(rng.IntN(0x80))
			}
			s := string(sb)
			b := []byte(s)
			for i := range b {
				if rng.IntN(2) == 0 && (b[i]|0x20 >= 'a' && b[i]|0x20 <= 'z') {
					b[i] ^= 0x20
				}
			}
			if !equalFoldASCII(b, s) {
				t.Fatalf("equalFoldASCII(%q, %q) = false", b, s)
			}
			for i := range b {
				old := b[i]
				for v := range 256 {
					b[i] = byte(v)
					if got, want := equalFoldASCII(b, s), bytes.EqualFold(b, []byte(s)); got != want {
						t.Fatalf("equalFoldASCII(%q, %q) = %v, bytes.EqualFold %v", b, s, got, want)
					}
				}
				b[i] = old
			}
		}
	}
}

// FuzzEqualFoldASCII holds equalFoldASCII to bytes.EqualFold for an ASCII
// s (the only kind it is called with).
func FuzzEqualFoldASCII(f *testing.F) {
	for _, tc := range equalFoldCases {
		f.Add([]byte(tc.b), tc.s)
	}
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return
			}
		}
		if got, want := equalFoldASCII(b, s), bytes.EqualFold(b, []byte(s)); got != want {
			t.Fatalf("equalFoldASCII(%q, %q) = %v, bytes.EqualFold %v", b, s, got, want)
		}
	})
}

// TestPlainTextResult: the text result's shortcut (plainText) copies the
// result exactly when the look for members to drop (mayDropMembers) would
// have let it be copied, so the answer's bytes are what they were: a text
// with a quote (members after the content, one of them dropped), a
// backslash (an escape may spell a name) or one of the looked-for names
// takes the look.
func TestPlainTextResult(t *testing.T) {
	for i, text := range []string{
		`hello world`, ``, `_meta`, `ttlMs`, `resultType`, `cacheScope`, `"ttlMs"`, `a\"b`, `\u005fmeta`, `x\\`,
		`x"}],"ttlMs":5,"y":[{"z":"`, `x"}],"_meta":{"a":1},"y":[{"z":"`, `M_TS`, `content`,
	} {
		for _, end := range []string{`"}],"isError":false`, `"}],"isError":true`, `"}],"isError":tru`, `"}],"isError":fals`, `"}]`, `"}],"isError":falsee`} {
			raw := []byte(`{"resultType":"complete","content":[{"type":"text","text":"` + text + end + string(legacyMetaTail) + `}`)
			body := raw[len(`{"resultType":"complete",`) : len(raw)-1-len(legacyMetaTail)]
			want, wantOK := []byte("{"+string(body)+"}"), !mayDropMembers(body)
			got, ok := appendLegacyResult(nil, raw, legacyMetaTail)
			if ok != wantOK || ok && !bytes.Equal(got, want) {
				t.Errorf("%d: text %q, end %q: appendLegacyResult = %s, %v; want %s, %v", i, text, end, got, ok, want, wantOK)
			}
			if plainText(body) != (end == `"}],"isError":false` || end == `"}],"isError":true`) && wantOK && !strings.ContainsAny(text, `"\`) {
				t.Errorf("%d: text %q, end %q: plainText = %v", i, text, end, plainText(body))
			}
		}
	}
	// The shape's two quotes around the text as one: not the shape.
	if body := []byte(`"content":[{"type":"text","text":"}],"isError":false`); plainText(body) {
		t.Errorf("plainText(%s) = true", body)
	}
}

// TestMetaKeyPrefix: modernFast skips its look for the session's keys in
// a client's _meta that lacks their common prefix; each of them has it.
func TestMetaKeyPrefix(t *testing.T) {
	for _, k := range metaKeys {
		if !strings.HasPrefix(k, metaKeyPrefix) {
			t.Errorf("%q does not begin with %q", k, metaKeyPrefix)
		}
	}
}

// TestSpliceDeclinesSessionKeys: with the body's envelope (the fast
// path's), the splice still declines a client _meta that names one of
// the session's keys, spelled plainly or with an escape, and splices one
// that does not.
func TestSpliceDeclinesSessionKeys(t *testing.T) {
	eng := engine.New(engine.Config{Logging: true})
	s := &Server{eng: eng, modern: engine.ProtocolVersion}
	ss := &session{s: s, local: true, rec: record{Version: ProtocolVersion, Caps: []byte(`{}`), Level: "info"}}
	for i, tc := range []struct {
		meta string
		want bool
	}{
		0: {`{"progressToken":1}`, true},
		1: {`{"io.modelcontextprotocol/logLevel":"debug"}`, false},
		2: {`{"io.modelcontextprotocol\/logLevel":"debug"}`, false},
		3: {`{"io.modelcontextprotocol/clientInfo":{}}`, false},
		4: {`{"x":1,"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`, false},
		5: {`{"io.modelcontextprotocol/other":1}`, true},
		6: {`{"\u0069o.modelcontextprotocol/clientCapabilities":{}}`, false},
		7: {`{"a":"\\"}`, true},
	} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":` + tc.meta + `}}`)
		var src codec.Envelope
		if err := codec.PeekWith(body, &src, codec.PeekConfig{}); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		_, ok := ss.modernFast(nil, nil, src.ID, "tools/call", src.Params, &src, nil)
		if ok != tc.want {
			t.Errorf("%d: modernFast of _meta %s: ok %v, want %v", i, tc.meta, ok, tc.want)
		}
	}
}

// TestTrimSpace: trimSpace is bytes.TrimSpace for every one- and two-byte
// input and around Unicode spaces (NEL, NBSP, U+2000) that bytes.TrimSpace
// trims and an ASCII look would miss.
func TestTrimSpace(t *testing.T) {
	check := func(v []byte) {
		if got, want := trimSpace(v), bytes.TrimSpace(v); !bytes.Equal(got, want) {
			t.Fatalf("trimSpace(%q) = %q, bytes.TrimSpace %q", v, got, want)
		}
	}
	for a := range 256 {
		check([]byte{byte(a)})
		for b := range 256 {
			check([]byte{byte(a), 'x', byte(b)})
		}
	}
	for _, s := range []string{"\u0085a", "a\u0085", "\u00a0a\u00a0", "a\u2000", "\u2000a", " a ", "a", ""} {
		check([]byte(s))
	}
}

// TestAppendLegacyResultShape: appendLegacyResult takes only the whole
// shape, {"resultType":"complete",MEMBERS,"_meta":SERVERMETA}: a result
// that does not end with the closing brace (the last byte would be cut as
// if it were one), or does not begin with the head, is declined.
func TestAppendLegacyResultShape(t *testing.T) {
	tail := []byte(`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	good := `{"resultType":"complete","content":[]` + string(tail) + `}`
	if out, ok := appendLegacyResult(nil, []byte(good), tail); !ok || string(out) != `{"content":[]}` {
		t.Fatalf("the shape: %v %s", ok, out)
	}
	for _, raw := range []string{
		`{"resultType":"complete","content":[]` + string(tail) + `x`,
		`{"resultType":"complete","content":[]` + string(tail) + ` `,
		`{"resultType":"completE","content":[]` + string(tail) + `}`,
		`{"resultType":"complete",`,
	} {
		if out, ok := appendLegacyResult(nil, []byte(raw), tail); ok {
			t.Errorf("%s: taken as %s", raw, out)
		}
	}
}
