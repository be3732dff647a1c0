package streamhttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/mcpwire/mcpwire/internal/fixture"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// nopReplier lets a test Begin and Fail a Call without a transport.
type nopReplier struct{}

func (nopReplier) Notify(*engine.Request, []byte) error     { return nil }
func (nopReplier) Reply(*engine.Request, []byte, int) error { return nil }
func (nopReplier) Done(*engine.Request)                     {}

var (
	sqlBindingsOnce sync.Once
	sqlBindings     []mcp.HeaderBinding
)

// sqlTool is the registered execute_sql tool (its bindings and names).
var sqlTool *engine.Tool

// executeSQLBindings returns the x-mcp-header bindings the engine derives
// from the EXAMPLES execute_sql schema (Region, Priority, DryRun).
func executeSQLBindings(tb testing.TB) []mcp.HeaderBinding {
	sqlBindingsOnce.Do(func() {
		eng := engine.New(defaultOptions())
		if err := eng.AddTool(engine.Tool{Name: "execute_sql", InputSchema: json.RawMessage(fixture.ExecuteSQLSchema),
			Handler: func(c *engine.Call) error { return nil }}); err != nil {
			panic(err)
		}
		var env codec.Envelope
		body := []byte(fixture.Ex2Body)
		if err := codec.Peek(body, &env); err != nil {
			panic(err)
		}
		c := engine.NewScope(eng, "").Begin(context.Background(), body, &env, nopReplier{}, nil)
		if e := c.Check(); e != nil {
			panic(e)
		}
		sqlTool = c.Tool()
		sqlBindings = append([]mcp.HeaderBinding(nil), c.Tool().HeaderBindings()...)
		c.Fail(codec.ErrParse) // recycle the Call
		_ = eng.Shutdown(context.Background())
	})
	if len(sqlBindings) != 3 {
		tb.Fatalf("execute_sql bindings = %+v", sqlBindings)
	}
	return sqlBindings
}

// FuzzMirroredHeaders feeds random header lines (hdrs: "Name: value"
// lines separated by '\n') and a random request body (method, name/uri,
// raw arguments) through mirrored.add and checkMethod / checkName /
// checkParams with the execute_sql bindings. Invariants:
//   - nothing panics;
//   - soundness: a check passes only if the header, decoded by an
//     independent oracle (encoding/base64, encoding/json, math/big), really
//     equals the body value, exactly once;
//   - completeness: headers built the way a conforming client builds them
//     from the same body always pass.
func FuzzMirroredHeaders(f *testing.F) {
	for _, s := range [][4]string{
		{"Mcp-Method: tools/call\nMcp-Name: execute_sql\nMcp-Param-Region: us-west1\nMcp-Param-Priority: 42\nMcp-Param-DryRun: false",
			`{"region":"us-west1","priority":42,"dry_run":false,"query":"SELECT 1"}`, "tools/call", "execute_sql"},
		{"Mcp-Method: tools/call\nMcp-Name: execute_sql\nMcp-Param-Region: =?base64?WsO8cmljaA==?=", `{"region":"Zürich","query":"SELECT 1"}`, "tools/call", "execute_sql"},
		{"mcp-method:  tools/call \nMCP-NAME:\techo\t", `{"text":"hi"}`, "tools/call", "echo"},
		{"Mcp-Method: TOOLS/CALL\nMcp-Name: foo", `{}`, "tools/call", "bar"},
		{"Mcp-Param-Priority: 42", `{"priority":42.0}`, "tools/call", "execute_sql"},
		{"Mcp-Param-Priority: 1", `{"priority":1e0}`, "tools/call", "x"},
		{"Mcp-Param-Region: =?BASE64?SGk=?=", `{"region":"=?BASE64?SGk=?="}`, "tools/call", "x"},
		{"Mcp-Param-Region: =?base64?SGVsbG8?=", `{"region":"Hello"}`, "tools/call", "x"},
		{"Mcp-Param-Region:", `{"region":""}`, "tools/call", "x"},
		{"Mcp-Param-Region: a\nMcp-Param-Region: a", `{"region":"a"}`, "tools/call", "x"},
		{"Mcp-Param-Region: a", `{"region":"b","region":"a"}`, "tools/call", "x"},
		{"Mcp-Name: =?base64?IGZvbyA=?=", `{}`, "resources/read", " foo "},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	bindings := executeSQLBindings(f)
	f.Fuzz(func(t *testing.T, hdrs, args, method, name string) {
		if !json.Valid([]byte(args)) {
			args = `{"region":` + jsonString(args) + `}`
		}
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":` + jsonString(method) + `,"params":{"name":` + jsonString(name) +
			`,"uri":` + jsonString(name) + `,"arguments":` + args + `,` + fixture.ExMeta + `}}`)
		var env codec.Envelope
		if err := codec.Peek(body, &env); err != nil || env.Kind != codec.KindRequest {
			return
		}
		var lines [][2]string
		var m mirrored
		for _, l := range strings.Split(hdrs, "\n") {
			k, v, _ := strings.Cut(l, ":")
			lines = append(lines, [2]string{k, v})
			m.add([]byte(k), []byte(v))
		}
		var bodyMethod, bodyName string
		if json.Unmarshal([]byte(jsonString(method)), &bodyMethod) != nil || json.Unmarshal([]byte(jsonString(name)), &bodyName) != nil {
			t.Fatal("oracle cannot decode its own encoding")
		}
		scratch := make([]byte, 0, 16)

		// Soundness.
		if m.checkMethod(&env) == nil {
			vs := headerValues(lines, "mcp-method")
			if len(vs) != 1 || trimOWSString(vs[0]) != bodyMethod {
				t.Errorf("checkMethod passed: headers %q, body method %q", vs, bodyMethod)
			}
		}
		for _, meth := range []string{"tools/call", "prompts/get", "resources/read"} {
			// checkName's shortcut gives the full path's answer (TestCheckNamePlain).
			full := &env.Name
			if meth == "resources/read" {
				full = &env.URI
			}
			if got, want := m.checkName(&env, meth, &scratch), m.checkNameFull(full, &scratch); !sameError(got, want) {
				t.Errorf("checkName(%s) = %v, the full path %v", meth, got, want)
			}
			if m.checkName(&env, meth, &scratch) == nil {
				vs := headerValues(lines, "mcp-name")
				if len(vs) != 1 {
					t.Errorf("checkName(%s) passed with %d Mcp-Name headers", meth, len(vs))
					continue
				}
				if d, ok := oracleDecode(vs[0]); !ok || d != bodyName {
					t.Errorf("checkName(%s) passed: header %q (decoded %q, ok %v), body %q", meth, vs[0], d, ok, bodyName)
				}
			}
		}
		if m.checkParams(&env, sqlTool, &scratch, new([maxFlatBindings][]byte)) == nil {
			for _, b := range bindings {
				vs := headerValues(lines, strings.ToLower(b.Header))
				val, present, ambiguous := oracleMember([]byte(args), b.Path[0])
				switch {
				case ambiguous:
					t.Errorf("checkParams passed although %q occurs more than once in %s", b.Path[0], args)
				case !present && len(vs) != 0:
					t.Errorf("checkParams passed: %s sent (%q) but the argument is absent in %s", b.Header, vs, args)
				case !present:
				case len(vs) != 1:
					t.Errorf("checkParams passed: %d %s headers for %s = %s", len(vs), b.Header, b.Path[0], val)
				default:
					d, ok := oracleDecode(vs[0])
					if !ok || !headerEquals(val, d) {
						t.Errorf("checkParams passed: %s %q (decoded %q, ok %v) vs body %s", b.Header, vs[0], d, ok, val)
					}
				}
			}
		}

		// Completeness: what a conforming client sends for this body.
		var good mirrored
		var keep [][]byte // the header values must outlive the checks
		add := func(k, v string) {
			vb := []byte(v)
			keep = append(keep, vb)
			good.add([]byte(k), vb)
		}
		add("MCP-Protocol-Version", "2026-07-28")
		if plainSafe(bodyMethod) {
			add("Mcp-Method", bodyMethod)
		}
		add("Mcp-Name", string(codec.AppendHeaderValue(nil, []byte(bodyName))))
		paramsOK := true
		for _, b := range bindings {
			val, present, ambiguous := oracleMember([]byte(args), b.Path[0])
			if ambiguous {
				paramsOK = false
				continue
			}
			if !present {
				continue
			}
			hv, ok := clientHeaderForm(val)
			if !ok {
				paramsOK = false
				continue
			}
			add(b.Header, hv)
		}
		if plainSafe(bodyMethod) {
			if e := good.checkMethod(&env); e != nil {
				t.Errorf("conforming Mcp-Method %q rejected: %s", bodyMethod, e.Message)
			}
		}
		if e := good.checkName(&env, "tools/call", &scratch); e != nil {
			t.Errorf("conforming Mcp-Name for %q rejected: %s", bodyName, e.Message)
		}
		if paramsOK {
			if e := good.checkParams(&env, sqlTool, &scratch, new([maxFlatBindings][]byte)); e != nil {
				t.Errorf("conforming Mcp-Param-* for %s rejected: %s", args, e.Message)
			}
		}
		_ = keep
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func trimOWSString(s string) string { return strings.Trim(s, " \t") }

// asciiFoldEqual compares header names the way HTTP does (ASCII only:
// strings.EqualFold would also fold "K" (Kelvin) and "ſ").
func asciiFoldEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// headerValues returns the values of every line named name.
func headerValues(lines [][2]string, name string) []string {
	var out []string
	for _, l := range lines {
		if asciiFoldEqual(l[0], name) {
			out = append(out, l[1])
		}
	}
	return out
}

// oracleDecode is an independent reading of B64-01..07 and PARAM-09: OWS
// trimmed, control characters refused, the exact lowercase sentinel form
// (at least 11 bytes) decoded as strict padded standard Base64 of UTF-8.
func oracleDecode(v string) (string, bool) {
	v = trimOWSString(v)
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return "", false
		}
	}
	if len(v) < 11 || !strings.HasPrefix(v, "=?base64?") || !strings.HasSuffix(v, "?=") {
		return v, true
	}
	d, err := base64.StdEncoding.Strict().DecodeString(v[9 : len(v)-2])
	if err != nil || !utf8.Valid(d) {
		return "", false
	}
	return string(d), true
}

// oracleMember finds key among the members of the JSON object obj with
// encoding/json's tokenizer (names compared after unescaping). present is
// false when the member is absent or null; ambiguous when it occurs twice.
func oracleMember(obj []byte, key string) (val json.RawMessage, present, ambiguous bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false, false
	}
	n := 0
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, false, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false, false
		}
		if k, _ := kt.(string); k == key {
			n++
			val = raw
		}
	}
	if n > 1 {
		return nil, false, true
	}
	if n == 0 || string(val) == "null" {
		return nil, false, false
	}
	return val, true, false
}

// headerEquals: the decoded header h is the PARAM-06 form of the JSON value
// v (strings as they are, numbers numerically and exactly, booleans as
// true/false).
func headerEquals(v json.RawMessage, h string) bool {
	switch v[0] {
	case '"':
		var s string
		return json.Unmarshal(v, &s) == nil && s == h
	case 't', 'f':
		return string(v) == h
	case '{', '[', 'n':
		return false
	}
	if h == "" || strings.Trim(strings.TrimPrefix(h, "-"), "0123456789") != "" || h == "-" {
		return false
	}
	bv, ok1 := new(big.Rat).SetString(string(v))
	hv, ok2 := new(big.Rat).SetString(h)
	return ok1 && ok2 && bv.Cmp(hv) == 0
}

// clientHeaderForm is the header a conforming client sends for v; ok is
// false when v cannot be mirrored (a non-integer number, out of range, an
// object).
func clientHeaderForm(v json.RawMessage) (string, bool) {
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return string(codec.AppendHeaderValue(nil, []byte(s))), true
	case 't', 'f':
		return string(v), true
	case '{', '[', 'n':
		return "", false
	}
	r, ok := new(big.Rat).SetString(string(v))
	if !ok || !r.IsInt() {
		return "", false
	}
	n := r.Num()
	limit := big.NewInt(1<<53 - 1)
	if n.CmpAbs(limit) > 0 {
		return "", false
	}
	return n.String(), true
}

// plainSafe: a method name a client can put in Mcp-Method as it is.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return s == ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 && s[i] != ' ' || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// FuzzProxyHeader: the PROXY header parser never panics, never claims more
// bytes than it was given, parses a complete header the same with or
// without what follows it, and asks for more (no error) on every prefix of
// a valid header, so a header split across reads parses as in one.
func FuzzProxyHeader(f *testing.F) {
	for _, s := range []string{
		"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n",
		"PROXY TCP6 2001:db8::1 2001:db8::2 1 2\r\n",
		"PROXY UNKNOWN\r\n",
		"PROXY TCP4 1.1.1.1 2.2.2.2 65535 0\r\n",
		"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\xc0\x00\x02\x09\x0a\x00\x00\x01\x04\xd2\x00\x50POST",
		"\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00",
		"\r\n\r\n\x00\r\nQUIT\n\x21\x21\x00\x24" + strings.Repeat("\x01", 36),
		"GET / HTTP/1.1\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := parseProxy(b)
		if err != nil {
			if n != 0 {
				t.Fatalf("error with n=%d", n)
			}
			return
		}
		if n < 0 || n > len(b) {
			t.Fatalf("n=%d of %d bytes", n, len(b))
		}
		if n == 0 {
			return
		}
		h2, n2, err2 := parseProxy(b[:n])
		if err2 != nil || n2 != n || h2 != h {
			t.Fatalf("header alone: %v %d %v, with the rest: %v %d", h2, n2, err2, h, n)
		}
		if !h.local && !h.src.Addr().IsValid() {
			t.Fatalf("no client address in %q", b[:n])
		}
		for k := 0; k < n; k += max(1, n/16) {
			if _, m, err := parseProxy(b[:k]); m != 0 || err != nil {
				t.Fatalf("prefix %d of %q: n=%d err=%v", k, b[:n], m, err)
			}
		}
	})
}

// FuzzHandlerHeaders: the raw header block a handler reads through
// Call.HeaderBytes and Call.VisitHeaders (fasthttp front end) is split
// like a line-by-line reference: each "name: value" line with a non-empty
// name gives one field, names and values trimmed of spaces and tabs, no
// CR or LF in either; the lookup is case-insensitive and returns the
// first field of that name.
func FuzzHandlerHeaders(f *testing.F) {
	f.Add([]byte("Host: a\r\nX-Tenant: acme\r\nx-tenant: other\r\n"), "X-TENANT")
	f.Add([]byte("Content-Type:application/json\r\n: empty name\r\nNoColon\r\nTraceparent:  00-ab-cd-01 \t\r\n"), "traceparent")
	f.Add([]byte("A: 1\nB: 2\r\n\r\n"), "b")
	f.Fuzz(func(t *testing.T, raw []byte, name string) {
		type field struct{ k, v string }
		var want []field
		for _, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimSuffix(line, "\r")
			k, v, ok := strings.Cut(line, ":")
			if !ok || k == "" || strings.Contains(line, "\r") {
				continue
			}
			want = append(want, field{trimOWSString(k), trimOWSString(v)})
		}
		x := &exchange{hraw: raw}
		var got []field
		x.VisitHeaders(func(k, v []byte) bool {
			if bytes.ContainsAny(k, "\r\n") || bytes.ContainsAny(v, "\r\n") {
				t.Fatalf("CR or LF in %q: %q", k, v)
			}
			got = append(got, field{string(k), string(v)})
			return true
		})
		if len(got) != len(want) {
			t.Fatalf("%d fields, want %d: %q vs %q", len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("field %d: %q, want %q", i, got[i], want[i])
			}
		}
		v, ok := x.LookupHeader(name)
		for _, fl := range want {
			if asciiFoldEqual(fl.k, name) {
				if !ok || string(v) != fl.v {
					t.Fatalf("LookupHeader(%q) = %q %v, want %q", name, v, ok, fl.v)
				}
				return
			}
		}
		if ok {
			t.Fatalf("LookupHeader(%q) = %q, want none", name, v)
		}
	})
}
