package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// The package's decoder and encoder, named apart from the fuzz targets'
// local variables.
var (
	codecUnmarshal = codec.Unmarshal
	codecMarshal   = codec.Marshal
)

// flatFuzzSchemas are flat schemas (each must flatten) checked both ways.
var flatFuzzSchemas = []string{
	echoSchema,
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`,
	`{"type":"object","properties":{"n":{"type":"number"},"f":{"type":"boolean"},"z":{"type":"null"},"o":{"type":"object"},"l":{"type":"array"}},"required":["n"]}`,
	`{"type":"object","properties":{"we ird":{"type":"string","description":"d"},"x":{"description":"any"}},"required":["we ird","y","x"],"additionalProperties":true}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"i":{"type":"integer","x-mcp-header":"I"}}}`,
	`{"type":"object","properties":{"10":{"type":"string"},"2":{"type":"string"},"b":{"type":"integer"}},"required":["10","2","b"]}`,
	// Closed, as typed tools infer them.
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string","description":"d"},"c":{}},"required":["a"],"additionalProperties":false}`,
}

// FuzzFlatMatchesCompiled: the flat check on raw bytes gives the verdict and
// the message the compiled schema gives, for any valid JSON arguments.
func FuzzFlatMatchesCompiled(f *testing.F) {
	for _, s := range []string{
		`{"text":"hello world"}`, `{}`, `[]`, `"s"`, `1`, `null`, `{"text":1}`, `{"text":null}`,
		`{"a":1,"b":2}`, `{"a":1.0,"b":1e2}`, `{"a":1.5,"b":2}`, `{"a":10e-1,"b":0.0e-5}`, `{"a":1e400,"b":-0}`,
		`{"a":100e-3,"b":2}`, `{"a":"1"}`, `{"n":1,"f":true,"z":null,"o":{},"l":[]}`, `{"n":"x","f":0}`,
		`{"we ird":"x","y":1,"x":[]}`, `{"i":-12.000}`, `{"i":1.2e1}`, `{"i":1.25e1}`, `{"text":"a","text":"b"}`,
		`{"a":0.1e1,"b":123456789012345678901234567890}`, `{"a":1E+2,"b":5e-0}`,
	} {
		f.Add(s)
	}
	var flats []*argSchema
	for _, s := range flatFuzzSchemas {
		a, err := compileArgSchema([]byte(s))
		if err != nil || a.flat == nil {
			f.Fatalf("%s: not flat (%v)", s, err)
		}
		flats = append(flats, a)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) || !utf8.ValidString(args) || !argsObject([]byte(args)) {
			return
		}
		for i, a := range flats {
			fe, ok := a.flat.check([]byte(args))
			if !ok {
				continue // left to the compiled schema
			}
			ce := a.checkCompiled([]byte(args))
			if (fe == nil) != (ce == nil) || (fe != nil && fe.Error() != ce.Error()) {
				t.Fatalf("schema %d, args %s: flat %v, compiled %v", i, args, fe, ce)
			}
		}
	})
}

// FuzzArgMessage: whatever the arguments, a refusal lists at most
// maxArgPaths lines (and one saying how many more), each at most
// maxArgMessage bytes of valid UTF-8 without control characters, never a
// long run of the input; its -32602 form is one line of at most
// maxArgMessage bytes.
func FuzzArgMessage(f *testing.F) {
	for _, s := range []string{`{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, `{"l":[1,2,{"k":"v"}]}`, `{"\u2028":1}`, `{"a\n":[[[]]]}`,
		`{"a":3,"b":"x","c":1,"d":true,"e":null,"f":[],"g":{},"h":1.5,"i":"","j":-1}`, `{"l":["a","b","c","d","e","f","g","h","i","j"]}`} {
		f.Add(s)
	}
	a, err := compileArgSchema([]byte(`{"type":"object","properties":{"a":{"type":"integer","enum":[1,2]},"l":{"type":"array","items":{"type":"integer"}}},"additionalProperties":{"type":"string","pattern":"^[a-z]*$"}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) || !argsObject([]byte(args)) {
			return
		}
		e := a.check([]byte(args))
		if e == nil {
			return
		}
		lines := strings.Split(e.Error(), "\n")
		if len(lines) > maxArgPaths+1 || !strings.HasPrefix(lines[0], argPrefix) {
			t.Fatalf("%d lines: %q", len(lines), e.Error())
		}
		for _, l := range lines {
			if len(l) > maxArgMessage || !utf8.ValidString(l) {
				t.Fatalf("line %q", l)
			}
			for _, c := range l {
				if c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029 {
					t.Fatalf("control character in %q", l)
				}
			}
			// A long run of the input never shows: the values here are
			// at most what the schema allows, the names are cut.
			if len(args) > 3*maxArgSegment && strings.Contains(l, args[:3*maxArgSegment]) {
				t.Fatalf("line %q copies the input", l)
			}
		}
		if m := e.rpcError().Message; len(m) > maxArgMessage || strings.ContainsAny(m, "\n\r") {
			t.Fatalf("-32602 message %q", m)
		}
	})
}

// FuzzTemplateMatch: parsing and matching never panic; a level-1 match
// puts the URI back together from the literals and the values (each
// non-empty and free of '/'); a match beyond level 1 is one the template's
// regular expression accepts, and its values expand again.
func FuzzTemplateMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"test://template/{id}/data", "test://template/12/data"},
		{"test://{a}-{b}", "test://x-y-z"},
		{"file:///{+path}", "file:///a/b%20c"},
		{"search://items{?q,lang}", "search://items?q=go&lang=en"},
		{"doc://{id}{#section}", "doc://7#intro"},
		{"doc://x{/seg*}", "doc://x/a/b"},
		{"m{;x,y}{.ext}{&z}", "m;x=1;y.json&z=2"},
		{"p{x:3}", "pabc"},
		{"bad{", "bad"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tpl, uri string) {
		if len(tpl) > 128 || len(uri) > 128 {
			return // the library's matcher is slow; length adds nothing here
		}
		tp, err := parseTemplate(tpl)
		if err != nil {
			return
		}
		vars, ok := tp.match(uri)
		if !ok {
			return
		}
		if tp.lib != nil {
			if !tp.lib.re.MatchString(uri) {
				t.Fatalf("%q matched %q outside its regexp", tpl, uri)
			}
			if _, err := (ResourceTemplate{URITemplate: tpl}).Expand(vars); err != nil {
				t.Fatalf("%q: matched values of %q do not expand: %v", tpl, uri, err)
			}
			return
		}
		got := tp.lits[0]
		for i, name := range tp.vars {
			v := vars[name]
			if v == "" || strings.IndexByte(v, '/') >= 0 {
				t.Fatalf("%q ~ %q: %s = %q", tpl, uri, name, v)
			}
			got += v + tp.lits[i+1]
		}
		// A repeated name keeps its last value: rebuild only when names
		// are distinct.
		if len(vars) == len(tp.vars) && got != uri {
			t.Fatalf("%q ~ %q: rebuilt %q", tpl, uri, got)
		}
	})
}

// FuzzTemplateExtract: for the templates extract can read, every match it
// finds is one the library's matcher finds too, with the same values (for
// URIs without commas).
func FuzzTemplateExtract(f *testing.F) {
	for _, s := range [][2]string{
		{"file:///{+path}", "file:///a/b%20c"},
		{"search://items{?q}{&lang}", "search://items?q=go&lang=en"},
		{"doc://{id}{#section}", "doc://7#intro"},
		{"doc://x{/seg}{.ext}", "doc://x/a.json"},
		{"m{;x}{;y}", "m;x;y=2"},
		{"t/{id}.json", "t/a.b.json"},
		{"t/{a}{/b}", "t/1/2"},
		{"q{?q}", "q?q"},
		{"q{?q}", "q?q=a,b"},
		{"r{+a}{+b}", "r/x/y"},
		{"search://items{?q,lang}", "search://items?q=go&lang=en"},
		{"search://items{?q,lang}", "search://items?lang=en&q=go"},
		{"s{?q,qq}{&r,s}", "s?qq=1&r=2&s"},
		{"m{;x,y,z}", "m;x;z=3"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, tpl, uri string) {
		if len(tpl) > 64 || len(uri) > 64 {
			return
		}
		l, err := parseLibTemplate(tpl)
		if err != nil || l.exprs == nil {
			return
		}
		got, ok := l.extract(uri)
		want, wok := l.libMatch(uri)
		if ok && !wok {
			t.Fatalf("%q ~ %q: groups %v, the library does not match", tpl, uri, got)
		}
		if !ok {
			// The library's matcher also takes a few malformed URIs the
			// groups refuse: its separators between named variables are
			// optional ("{;x,z}" ~ ";xz" gives both absent). Stricter is
			// fine; only a match must agree.
			return
		}
		if strings.Contains(uri, ",") {
			// A comma is the list separator; the library's matcher splits
			// and rejoins values around it in ways that depend on empty
			// items ("{x}" ~ "," gives x = ""), the groups keep it as
			// written ("," here). Only the verdict is compared.
			return
		}
		if ok && !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("%q ~ %q: groups %v, library %v", tpl, uri, got, want)
		}
	})
}

// FuzzCursor: the list cursor decoder never panics and answers any input
// with one of its shared refusals or a kind and key that encode back to a
// cursor decoding to the same (so no two positions share a cursor); any
// kind and key survive encoding and decoding unchanged.
func FuzzCursor(f *testing.F) {
	for _, c := range []struct {
		kind byte
		key  string
	}{{cursorTools, "echo"}, {cursorPrompts, "p"}, {cursorResources, "test://r/1"}, {cursorLister, ""}, {cursorLister, "after:42"}, {cursorTemplates, "x://{id}"}} {
		enc, _ := appendCursor(nil, nil, c.kind, c.key)
		f.Add(string(enc), c.kind, c.key)
	}
	f.Add("abc", byte('T'), "\xff")
	f.Add("AVR0b29sLTAwMDAx\r\njyTxNQ", byte(0), "")
	f.Fuzz(func(t *testing.T, enc string, kind byte, key string) {
		got, e := decodeCursor(nil, []byte(enc))
		switch {
		case e != nil:
			if e != errBadCursor && e != errCursorLong || len(got) != 0 {
				t.Fatalf("%q: refusal %v with %q", enc, e, got)
			}
		default:
			again, _ := appendCursor(nil, nil, got[0], string(got[1:]))
			back, e2 := decodeCursor(nil, again)
			if e2 != nil || string(back) != string(got) {
				t.Fatalf("%q decodes to %q, re-encoded %q decodes to %q (%v)", enc, got, again, back, e2)
			}
		}
		if len(key) > maxCursorKey {
			return
		}
		c, _ := appendCursor(nil, nil, kind, key)
		got, e = decodeCursor(nil, c)
		valid := strings.IndexByte("TPRU", kind) >= 0 && key != "" || kind == cursorLister
		if valid != (e == nil) || (e == nil && string(got) != string(kind)+key) {
			t.Fatalf("kind %q key %q: encoded %q decodes to %q (%v)", kind, key, c, got, e)
		}
	})
}

// flatKinds has a field of every kind the flat codec handles.
type flatKinds struct {
	S   string  `json:"s"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i"`
	I8  int8    `json:"i8,omitempty"`
	I64 int64   `json:"i64,omitzero"`
	U16 uint16  `json:"u16"`
	U   uint    `json:"u,omitempty"`
	F   float64 `json:"f"`
	Fo  float64 `json:"fo,omitempty"`
}

// flatPlain is flat and so is its inferred schema: no sized integers.
type flatPlain struct {
	S   string  `json:"s"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i"`
	I64 int64   `json:"i64,omitzero"`
	F   float64 `json:"f"`
	Fo  float64 `json:"fo,omitempty"`
}

// FuzzFlatCodec: the flat codec gives the Go value sonic gives, or
// declines; what it encodes means what sonic's encoding means.
func FuzzFlatCodec(f *testing.F) {
	for _, s := range []string{
		`{"s":"a","b":true,"i":-3,"i8":127,"i64":1,"u16":65535,"u":1,"f":1.5,"fo":-0.0}`, `{}`, `{"s":"\u00e9\n"}`,
		`{"i8":128}`, `{"u16":-1}`, `{"i":1.0}`, `{"i":1e2}`, `{"f":1e400}`, `{"s":null,"b":null}`, `{"s":1}`,
		`{"s":"a","s":"b"}`, `{"x":[1,{"s":2}],"s":"ok"}`, `{"S":"case"}`, `{"s":"\xff"}`,
		`{"s":"x","i":-3,"i64":9,"f":2.5,"b":true}`, `{"f":0,"i":1,"s":"\u00e9"}`, `{"s":"","i":0,"f":-1e-3,"fo":7}`,
	} {
		f.Add(s, "text", true, int64(-7), 2.5)
	}
	codec := newFlatCodec(reflect.TypeFor[flatKinds]())
	if codec == nil {
		f.Fatal("flatKinds is not flat")
	}
	// The inferred inputSchema's flat check, whose scan a typed tool
	// decodes from (decodeScanned): it must give what decode gives. (A
	// sized integer adds a range, and a range makes a schema not flat.)
	plain := newFlatCodec(reflect.TypeFor[flatPlain]())
	sch, err := schemaFor(reflect.TypeFor[flatPlain](), schemaInput)
	if err != nil {
		f.Fatal(err)
	}
	a, err := compileArgSchema(sch)
	if err != nil || a.flat == nil || plain == nil {
		f.Fatalf("flatPlain or its schema is not flat: %v", err)
	}
	m := plain.mapFrom(a.flat)
	if m.idx == nil {
		f.Fatal("flatPlain's names are not all in its schema")
	}
	f.Fuzz(func(t *testing.T, args, s string, b bool, n int64, x float64) {
		if json.Valid([]byte(args)) && argsObject([]byte(args)) {
			var fast flatKinds
			if codec.decode([]byte(args), unsafe.Pointer(&fast), &strChunk{}) {
				var slow flatKinds
				if err := codecUnmarshal([]byte(args), &slow); err != nil {
					t.Fatalf("%s: flat decoded %+v, sonic refused: %v", args, fast, err)
				}
				if fast != slow {
					t.Fatalf("%s: flat %+v, sonic %+v", args, fast, slow)
				}
			}
			var vals [maxFlat][]byte
			if e, scanned := a.checkScan([]byte(args), &vals); scanned && e == nil {
				var from, again flatPlain
				ok := plain.decodeScanned(m, &vals, unsafe.Pointer(&from), &strChunk{}, false)
				if want := plain.decode([]byte(args), unsafe.Pointer(&again), nil); ok != want || (ok && from != again) {
					t.Fatalf("%s: from the check's scan %v %+v, scanning again %v %+v", args, ok, from, want, again)
				}
			}
		}
		v := flatKinds{S: s, B: b, I: int(n), I8: int8(n), I64: n, U16: uint16(n), U: uint(n), F: x, Fo: x / 3}
		enc, ok := codec.encode(nil, unsafe.Pointer(&v))
		if !ok {
			return
		}
		want, err := codecMarshal(v)
		if err != nil {
			t.Fatalf("%+v: flat encoded %s, sonic refused: %v", v, enc, err)
		}
		var a, w map[string]any
		if err := json.Unmarshal(enc, &a); err != nil {
			t.Fatalf("flat encoding %s: %v", enc, err)
		}
		if err := json.Unmarshal(want, &w); err != nil || !reflect.DeepEqual(a, w) {
			t.Fatalf("flat %s, sonic %s", enc, want)
		}
	})
}

// FuzzPlainUTF8: the flat codec's word-at-a-time check of a string body
// says what its definition says: valid UTF-8 and no backslash.
func FuzzPlainUTF8(f *testing.F) {
	for _, s := range []string{"", "hello world", "hello w\\rld", "0123456\\", "01234567\\", "\\", "héllo wörld 😀 and more",
		"abcdefgh\xffabc", "abcdefg\xe2\x82", "abcdefgh\xe2\x82\xac\\", "01234567890123456789\\0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want := utf8.Valid(body) && bytes.IndexByte(body, '\\') < 0
		if got := plainUTF8(body); got != want {
			t.Fatalf("plainUTF8(%q) = %v, want %v", body, got, want)
		}
	})
}
