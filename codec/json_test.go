package codec

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestSonicIsNotFallback fails when sonic runs its encoding/json fallback
// (sonic v1.15.5: Go >= 1.28, or an architecture other than amd64/arm64),
// because that path ignores CaseSensitive and folds member names (A10,
// CVE-2026-27896, STYLE "A test must fail if sonic runs its fallback").
func TestSonicIsNotFallback(t *testing.T) {
	if UsingFallback() {
		t.Fatal("sonic runs its encoding/json fallback: member names match case-insensitively")
	}
	type req struct {
		Method string `json:"method"`
	}
	cases := []struct {
		in   string
		want string
	}{
		{`{"Method":"tools/call","method":"tools/list"}`, "tools/list"},
		{`{"method":"tools/list","Method":"tools/call"}`, "tools/list"},
		{`{"Method":"x"}`, ""},
		{`{"METHOD":"x"}`, ""},
		{`{"meThod":"x"}`, ""},
		{`{"\u004dethod":"x"}`, ""},
	}
	for i, c := range cases {
		var r req
		if err := Unmarshal([]byte(c.in), &r); err != nil {
			t.Fatalf("#%d: %v", i, err)
		}
		if r.Method != c.want {
			t.Errorf("#%d Unmarshal(%s).Method = %q, want %q (case-variant key taken)", i, c.in, r.Method, c.want)
		}
	}
	// Kelvin sign: strings.ToLower("\u212A") == "k", the fold sonic's
	// case-insensitive retry would apply; ſ is not lowered but encoding/json folds it.
	type kind struct {
		K string `json:"kind"`
		S string `json:"s"`
	}
	var k kind
	if err := Unmarshal([]byte(`{"\u212Aind":"x","ſ":"y"}`), &k); err != nil {
		t.Fatal(err)
	}
	if k.K != "" || k.S != "" {
		t.Errorf("Unicode-folded keys taken: %+v", k)
	}
}

// TestPeekGuardsFallback: whatever sonic does, Peek rejects every input the
// previous test feeds it before anything is decoded (A10 must hold even on
// the fallback).
func TestPeekGuardsFallback(t *testing.T) {
	for i, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","meThod":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","\u004eame":"b"}}`,
	} {
		var env Envelope
		if err := Peek([]byte(msg), &env); err != ErrDuplicateKey {
			t.Errorf("#%d %s: %v", i, msg, err)
		}
	}
	// Inside _meta a case variant is another key (META-02): never matched,
	// so the request lacks the real key whatever a decoder would fold.
	var env Envelope
	if err := Peek([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progresstoken":1}}}`), &env); err != nil || env.ProgressToken != nil {
		t.Errorf("_meta progresstoken: err %v, token %q", err, env.ProgressToken)
	}
}

func TestMarshal(t *testing.T) {
	v := struct {
		A string          `json:"a"`
		B []int           `json:"b"`
		R json.RawMessage `json:"r"`
	}{A: "<&>\u2028 \xff", B: []int{1, 2}, R: json.RawMessage(`{"x":1}`)}
	out, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(out) || !json.Valid(out) {
		t.Fatalf("invalid output %q", out)
	}
	if bytes.Contains(out, []byte(`\u003c`)) {
		t.Errorf("HTML escaped: %s", out)
	}
	if !bytes.Contains(out, []byte(`\ufffd`)) {
		t.Errorf("invalid UTF-8 not replaced: %q", out)
	}
	var back struct {
		A string `json:"a"`
	}
	if err := Unmarshal(out, &back); err != nil || !utf8.ValidString(back.A) {
		t.Fatalf("round trip: %q %v", back.A, err)
	}
}

func TestAppendMarshal(t *testing.T) {
	v := map[string]any{"resultType": "complete", "n": 1}
	for i, dst := range [][]byte{nil, []byte("data: "), append(make([]byte, 0, 4096), "data: "...)} {
		prefix := string(dst)
		out, err := AppendMarshal(dst, v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(out, []byte(prefix)) || !json.Valid(out[len(prefix):]) {
			t.Errorf("#%d: %q", i, out)
		}
		if bytes.HasSuffix(out, []byte("\n")) {
			t.Errorf("#%d: trailing newline", i)
		}
	}
	// The prefix is never rewritten, even if it is not UTF-8 (a binary header).
	dst := append(make([]byte, 0, 64), 0xff, 0x00)
	out, err := AppendMarshal(dst, "x\xff")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[:2], []byte{0xff, 0x00}) || string(out[2:]) != `"x\ufffd"` {
		t.Errorf("got %q", out)
	}
	// Marshal errors leave dst as it was.
	if out, err := AppendMarshal([]byte("p"), make(chan int)); err == nil || string(out) != "p" {
		t.Errorf("chan: %q %v", out, err)
	}
}

func TestUnmarshalCopiesStrings(t *testing.T) {
	data := []byte(`{"method":"tools/list"}`)
	var r struct {
		Method string `json:"method"`
	}
	if err := Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	copy(data, bytes.Repeat([]byte("x"), len(data))) // the pooled buffer is reused
	if r.Method != "tools/list" {
		t.Fatalf("decoded string aliases the input: %q", r.Method)
	}
}
