package streamhttp

import (
	"encoding/binary"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/internal/fixture"
)

// sameError reports whether two answers of a mirrored check are the same
// answer: both nil, or the same code and message.
func sameError(a, b *codec.Error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Code == b.Code && a.Message == b.Message
}

// nameBody peeks a tools/call (and, with the same string as uri, a
// resources/read) whose params.name is the JSON string literal lit.
func nameBody(t *testing.T, lit string) *codec.Envelope {
	t.Helper()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + lit + `,"uri":` + lit +
		`,"arguments":{},` + fixture.ExMeta + `}}`)
	env := new(codec.Envelope)
	if err := codec.Peek(body, env); err != nil || env.Kind != codec.KindRequest {
		t.Fatalf("peek %s: %v", body, err)
	}
	return env
}

// TestCheckNamePlain holds checkName's shortcut (a literal Mcp-Name equal
// to the body's unescaped string, compared once: plainEqual) to the full
// path it skips (HVAL-01, HVAL-02 step 13; HDR-04, HDR-05, B64-05,
// B64-06, PARAM-09): for every case the same answer, nil or the same
// -32020 error, for each of the three methods. The cases the shortcut must
// leave to the full path fail it when its checks are taken out: a 0x7f in
// both (the full path refuses the header's byte), a value of the base64
// sentinel's shape that equals the body as written (the full path decodes
// the header and finds a mismatch), and two Mcp-Name headers.
func TestCheckNamePlain(t *testing.T) {
	cases := []struct {
		lit     string   // params.name / params.uri as a JSON literal
		headers []string // the Mcp-Name values sent (after OWS trimming)
		ok      bool     // the answer the full path gives
	}{
		{`"echo"`, []string{"echo"}, true},
		{`"echo"`, []string{"echO"}, false},
		{`"echo"`, []string{"ech"}, false},
		{`"echo"`, []string{"echoo"}, false},
		{`"echo"`, []string{""}, false},
		{`""`, []string{""}, true},
		{`"echo"`, nil, false},
		{`"echo"`, []string{"echo", "echo"}, false}, // twice: the duplicate's error, not a pass
		{`"ec\u0068o"`, []string{"echo"}, true},     // escaped body: the full path compares
		{`"ec\u0068o"`, []string{`ec\u0068o`}, false},
		{`"ec` + "\x7f" + `ho"`, []string{"ec\x7fho"}, false}, // equal, but DEL is refused in a header
		{`"ec\u007fho"`, []string{"ec\x7fho"}, false},
		{`"a\tb"`, []string{"a\tb"}, true},                                // an escaped tab in the body: the full path compares, a tab is allowed in a header
		{`"=?base64?ZWNobw==?="`, []string{"=?base64?ZWNobw==?="}, false}, // equal as written; decoded, "echo" differs
		{`"echo"`, []string{"=?base64?ZWNobw==?="}, true},
		{`"=?base64?"`, []string{"=?base64?"}, true},      // 10 bytes: a literal
		{`"=?base64??="`, []string{"=?base64??="}, false}, // 11 bytes: the sentinel of nothing, decoded to ""
		{`"=xxxxxxxxxx"`, []string{"=xxxxxxxxxx"}, true},  // 11 bytes starting '=': the full path, same answer
		{`"file:///tmp/a b.txt"`, []string{"file:///tmp/a b.txt"}, true},
		{`"Zürich"`, []string{"Zürich"}, true},
		// checkName's word test (values of 4 to 8 bytes): a difference
		// or a DEL in either half, and the lengths at its bounds.
		{`"abcdefgh"`, []string{"abcdefgh"}, true},
		{`"abcdefgh"`, []string{"abcdefgx"}, false},
		{`"abcdefgh"`, []string{"xbcdefgh"}, false},
		{`"abcdefg` + "\x7f" + `"`, []string{"abcdefg\x7f"}, false},
		{`"` + "\x7f" + `bcdefgh"`, []string{"\x7fbcdefgh"}, false},
		{`"abcde"`, []string{"abcde"}, true},
		{`"abcde"`, []string{"abcdx"}, false},
		{`"ab` + "\x7f" + `de"`, []string{"ab\x7fde"}, false},
		{`"abcd` + "\x7f" + `"`, []string{"abcd\x7f"}, false},
		{`"echo"`, []string{"echx"}, false},
		{`"echo"`, []string{"xcho"}, false},
		{`"abcdefghi"`, []string{"abcdefghi"}, true},
		{`"abcdefghi"`, []string{"abcdefghx"}, false},
		{`"abcdefghi"`, []string{"abcdxfghi"}, false}, // 9 bytes: the middle one is past two 4-byte halves
		{`"abcd` + "\x7f" + `fghi"`, []string{"abcd\x7ffghi"}, false},
	}
	for _, tc := range cases {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + tc.lit + `}}`)
		var probe codec.Envelope
		if err := codec.Peek(body, &probe); err != nil {
			continue // a body the codec refuses never reaches the check
		}
		env := nameBody(t, tc.lit)
		var m mirrored
		for _, v := range tc.headers {
			m.add([]byte("Mcp-Name"), []byte(v))
		}
		for _, method := range []string{"tools/call", "prompts/get", "resources/read"} {
			scratch := make([]byte, 0, 16)
			got := m.checkName(env, method, &scratch)
			body := &env.Name
			if method == "resources/read" {
				body = &env.URI
			}
			want := m.checkNameFull(body, &scratch)
			if !sameError(got, want) {
				t.Errorf("%s %s, Mcp-Name %q: checkName %v, the full path %v", method, tc.lit, tc.headers, got, want)
			}
			if (want == nil) != tc.ok {
				t.Errorf("%s %s, Mcp-Name %q: the full path answers %v, want ok=%v", method, tc.lit, tc.headers, want, tc.ok)
			}
		}
		var m0 mirrored
		if e := m0.checkName(env, "tools/list", new([]byte)); e != nil {
			t.Errorf("tools/list needs no Mcp-Name: %v", e)
		}
	}
}

// TestCheckMethodVersionShort holds checkMethod and checkVersionEqual
// (strEqual in place of codec.Str.Equal; HVAL-02 steps 9 and 11, HDR-01,
// HDR-03, HDR-06) to Str.Equal: the same answer for values equal, one
// byte off, of another length, escaped in the body, and for the Mcp-Method
// header missing or sent twice.
func TestCheckMethodVersionShort(t *testing.T) {
	for _, tc := range []struct {
		method, version string // JSON literals in the body
		hdrMethod       []string
		hdrVersion      string
	}{
		{`"tools/call"`, `"2026-07-28"`, []string{"tools/call"}, "2026-07-28"},
		{`"tools/call"`, `"2026-07-28"`, []string{"tools/calL"}, "2026-07-29"},
		{`"tools/call"`, `"2026-07-28"`, []string{"tools/cal"}, "2026-07-2"},
		{`"tools/call"`, `"2026-07-28"`, []string{"tools/call", "tools/call"}, "2026-07-28 "},
		{`"tools/call"`, `"2026-07-28"`, nil, ""},
		{`"tools\/call"`, `"2026\u002d07-28"`, []string{"tools/call"}, "2026-07-28"},
		{`"tools\/call"`, `"2026\u002d07-28"`, []string{`tools\/call`}, `2026\u002d07-28`},
	} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":` + tc.method + `,"params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":` +
			tc.version + `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
		var env codec.Envelope
		if err := codec.Peek(body, &env); err != nil {
			t.Fatalf("peek %s: %v", body, err)
		}
		var m mirrored
		for _, v := range tc.hdrMethod {
			m.add([]byte("Mcp-Method"), []byte(v))
		}
		m.add([]byte("Mcp-Protocol-Version"), []byte(tc.hdrVersion))
		var want *codec.Error
		if e := once(&m.method, errNoMethodHeader, errDupMethod); e != nil {
			want = e
		} else if !env.Method.Equal(m.method.v) {
			want = mismatch("Mcp-Method header value '" + string(m.method.v) + "' does not match body value '" + env.Method.String() + "'")
		}
		if got := m.checkMethod(&env); !sameError(got, want) {
			t.Errorf("method %s, Mcp-Method %q: %v, want %v", tc.method, tc.hdrMethod, got, want)
		}
		want = nil
		if !env.ProtocolVersion.Equal(m.version.v) {
			want = m.versionMismatch(&env)
		}
		if got := m.checkVersionEqual(&env); !sameError(got, want) {
			t.Errorf("version %s, header %q: %v, want %v", tc.version, tc.hdrVersion, got, want)
		}
	}
	// A body without the member: Present false, nothing equals it.
	var env codec.Envelope
	if err := codec.Peek([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`), &env); err != nil {
		t.Fatal(err)
	}
	var m mirrored
	m.add([]byte("Mcp-Protocol-Version"), nil)
	if m.checkVersionEqual(&env) == nil {
		t.Error("an empty version header equals a body without a version")
	}
}

// TestPlainEqual: plainEqual by itself, on byte strings the codec may
// never hand over (it refuses raw bytes below 0x20 in a JSON string), so
// that the shortcut does not depend on that: every byte decodeHeader
// refuses, and a tab, make it answer false.
func TestPlainEqual(t *testing.T) {
	for c := 0; c < 0x100; c++ {
		v := []byte{'a', byte(c), 'b'}
		refused := (c < 0x20 && c != '\t') || c == 0x7f
		if got := plainEqual(v, v); got == (refused || c == '\t') {
			t.Errorf("plainEqual(%q, itself) = %v", v, got)
		}
	}
	if plainEqual([]byte("echo"), []byte("echO")) || plainEqual([]byte("echo"), []byte("ech")) || plainEqual([]byte("=?base64??="), []byte("=?base64??=")) {
		t.Error("plainEqual passed a value that differs or has the sentinel's shape")
	}
}

// TestPlainWord: plainWord against the byte test it stands for (below
// 0x20, or 0x7f), for every byte value at every position of a word, with
// the other bytes plain, and next to a second byte of every value at
// every other position (a borrow from one must not hide or fake the
// other). Bytes below 0x20 never reach checkName from the codec (JSON
// refuses them raw), so this is their test. Fails if a bound is off by
// one (0x1f, 0x20, 0x7e, 0x7f, 0x80 are all tried) or either half of the
// test is dropped.
func TestPlainWord(t *testing.T) {
	refused := func(c byte) bool { return c < 0x20 || c == 0x7f }
	for i := 0; i < 8; i++ {
		for c := 0; c < 0x100; c++ {
			for j := 0; j < 8; j++ {
				for _, d := range []byte{'k', 0x00, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff} {
					var b [8]byte
					for k := range b {
						b[k] = 'k'
					}
					b[j] = d
					b[i] = byte(c)
					want := true
					for _, x := range b {
						if refused(x) {
							want = false
						}
					}
					if got := plainWord(binary.LittleEndian.Uint64(b[:])); got != want {
						t.Fatalf("plainWord(%q) = %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}
