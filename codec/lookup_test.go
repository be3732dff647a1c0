package codec

import (
	"bytes"
	"testing"
)

// TestLookupPath covers PARAM-05 extraction from params.arguments.
func TestLookupPath(t *testing.T) {
	args := []byte(`{"region":"us-west1","priority":42,"dry_run":false,"query":"SELECT 1","nested":{"a":{"b":[1,{"c":2}]},"x":null},"esc\u0061ped":"v","dup":1,"dup":2}`)
	cases := []struct {
		path   []string
		want   string
		wantOK bool
	}{
		{[]string{"region"}, `"us-west1"`, true},
		{[]string{"priority"}, `42`, true},
		{[]string{"dry_run"}, `false`, true},
		{[]string{"nested", "a"}, `{"b":[1,{"c":2}]}`, true},
		{[]string{"nested", "a", "b"}, `[1,{"c":2}]`, true},
		{[]string{"nested", "x"}, `null`, true}, // present, null: PARAM-05 says omit the header; the caller decides
		{[]string{"nested", "a", "b", "c"}, ``, false},
		{[]string{"escaped"}, `"v"`, true}, // names compare unescaped
		{[]string{"Region"}, ``, false},    // case-sensitive (A10)
		{[]string{"missing"}, ``, false},
		{[]string{"region", "x"}, ``, false}, // walking into a string
		{[]string{"dup"}, `2`, true},         // last wins, like sonic / encoding/json
		{nil, string(args), true},
	}
	for i, c := range cases {
		got, ok := LookupPath(args, c.path...)
		if ok != c.wantOK || string(got) != c.want {
			t.Errorf("#%d %v: got %q %v, want %q %v", i, c.path, got, ok, c.want, c.wantOK)
		}
	}
}

func TestLookupPathStrict(t *testing.T) {
	cases := []struct {
		obj       string
		path      []string
		want      string
		wantFound bool
		wantErr   error
	}{
		{`{"a":1}`, []string{"a"}, `1`, true, nil},
		{`{"a":1}`, []string{"b"}, ``, false, nil},
		{`{"a":1,"a":2}`, []string{"a"}, ``, false, ErrDuplicateKey},
		{`{"a":1,"\u0061":2}`, []string{"a"}, ``, false, ErrDuplicateKey},
		{`{"a":{"b":1,"b":1}}`, []string{"a", "b"}, ``, false, ErrDuplicateKey},
		{`{"a":{"b":1},"A":{"b":2}}`, []string{"a", "b"}, `1`, true, nil},
		{`{"a":1`, []string{"a"}, ``, false, ErrParse},
		{"{\"a\":\"\xff\"}", []string{"a"}, ``, false, ErrInvalidUTF8},
	}
	for i, c := range cases {
		got, found, err := LookupPathStrict([]byte(c.obj), c.path...)
		if err != c.wantErr || found != c.wantFound || string(got) != c.want {
			t.Errorf("#%d %s %v: got %q %v %v", i, c.obj, c.path, got, found, err)
		}
	}
}

func TestLookupString(t *testing.T) {
	obj := []byte(`{"region":"Z\u00fcrich","n":5,"plain":"us-west1"}`)
	s, ok := LookupString(obj, "region")
	if !ok || !s.Escaped || !s.EqualString("Zürich") {
		t.Errorf("region: %+v %v", s, ok)
	}
	s, ok = LookupString(obj, "plain")
	if !ok || s.Escaped || !s.EqualString("us-west1") {
		t.Errorf("plain: %+v %v", s, ok)
	}
	if _, ok := LookupString(obj, "n"); ok {
		t.Error("non-string accepted")
	}
	if _, ok := LookupString(obj, "none"); ok {
		t.Error("missing accepted")
	}
}

// TestLookupPathMalformed: LookupPath never returns a value from broken input
// and never panics, whatever the split point (STYLE: every split point).
func TestLookupPathMalformed(t *testing.T) {
	for i, obj := range []string{``, `   `, `[1]`, `"s"`, `{`, `{"a"`, `{"a":`, `{"a":1,}`, `{"a":1}}`, `{"a":1} x`, `{"a" 1}`, `{a:1}`, `{"a":[1,2}`} {
		if _, ok := LookupPath([]byte(obj), "a"); ok {
			t.Errorf("#%d %q: accepted", i, obj)
		}
	}
	whole := []byte(`{"region":"us-west1","nested":{"a":{"b":[1,{"c":"\u00e9"}]}},"z":true}`)
	for n := 0; n < len(whole); n++ {
		prefix := bytes.Clone(whole[:n])
		for _, p := range [][]string{{"region"}, {"nested", "a", "b"}, {"z"}, {"q"}} {
			if got, ok := LookupPath(prefix, p...); ok {
				t.Errorf("prefix %d %v: accepted %q", n, p, got)
			}
		}
		_, _ = LookupPath(bytes.Clone(whole[n:]), "region")
	}
}

// TestArgStringRecorded: Envelope.ArgString reads the members Peek
// recorded (no scan) and gives what LookupString gives on the same
// arguments: names of every length around the 4- and 8-byte compares,
// differing in their first, middle or last byte, a repeated name (the
// last wins), a value that is not a string, and arguments Peek did not
// record (scanned, escapes unescaped by the caller).
func TestArgStringRecorded(t *testing.T) {
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":`
	cases := []struct {
		args     string
		key      string
		want     string // the body; "" with !ok
		ok       bool
		recorded bool
	}{
		0:  {`{"text":"hello world"}`, "text", "hello world", true, true},
		1:  {`{"text":"hello world"}`, "texT", "", false, true},
		2:  {`{"text":"hello world"}`, "Text", "", false, true},
		3:  {`{"text":"hello world"}`, "tExt", "", false, true},
		4:  {`{"text":"hello world"}`, "tex", "", false, true},
		5:  {`{"text":"hello world"}`, "texts", "", false, true},
		6:  {`{"a":"1","ab":"2","abc":"3"}`, "a", "1", true, true},
		7:  {`{"a":"1","ab":"2","abc":"3"}`, "ab", "2", true, true},
		8:  {`{"a":"1","ab":"2","abc":"3"}`, "abc", "3", true, true},
		9:  {`{"a":"1","ab":"2","abc":"3"}`, "abd", "", false, true},
		10: {`{"abcde":"5","abcdefg":"7","abcdefgh":"8"}`, "abcde", "5", true, true},
		11: {`{"abcde":"5","abcdefg":"7","abcdefgh":"8"}`, "abcdefg", "7", true, true},
		12: {`{"abcde":"5","abcdefg":"7","abcdefgh":"8"}`, "abcdefgh", "8", true, true},
		13: {`{"abcde":"5","abcdefg":"7","abcdefgh":"8"}`, "abcdefgX", "", false, true},
		14: {`{"abcde":"5","abcdefg":"7","abcdefgh":"8"}`, "abXdefgh", "", false, true},
		15: {`{"abcdefghi":"9","abcdefghijklm":"13"}`, "abcdefghi", "9", true, true},
		16: {`{"abcdefghi":"9","abcdefghijklm":"13"}`, "abcdefghijklm", "13", true, true},
		17: {`{"abcdefghi":"9","abcdefghijklm":"13"}`, "abcdefghijklX", "", false, true},
		18: {`{"k":"first","k":"last"}`, "k", "last", true, true},
		19: {`{"k":"first","k":1}`, "k", "", false, true},
		20: {`{"k":1,"k":"last"}`, "k", "last", true, true},
		21: {`{"n":12,"b":true,"z":null}`, "n", "", false, true},
		22: {`{"n":12,"b":true,"z":null}`, "z", "", false, true},
		23: {`{"s":""}`, "s", "", true, true},
		24: {`{}`, "s", "", false, true},
		25: {`{"s":"a\"b"}`, "s", `a\"b`, true, false},
		26: {`{ "s":"x"}`, "s", "x", true, false},
		27: {`{"a":"1","b":"2","c":"3","d":"4","s":"5"}`, "s", "5", true, false},
		28: {`{"":"empty"}`, "", "empty", true, true},
	}
	for i, c := range cases {
		var env Envelope
		msg := []byte(head + c.args + "}}")
		if err := Peek(msg, &env); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if rec := env.PlainArguments() >= 0; rec != c.recorded {
			t.Fatalf("%d: recorded %v, want %v", i, rec, c.recorded)
		}
		got, ok := env.ArgString(c.key)
		want, wok := LookupString(env.Arguments, c.key)
		if ok != c.ok || string(got.Raw) != c.want || ok != wok || !bytes.Equal(got.Raw, want.Raw) || got.Escaped != want.Escaped || got.Present != want.Present {
			t.Errorf("%d: ArgString(%q) = %q %+v %v, LookupString %q %+v %v, want %q %v", i, c.key, got.Raw, got, ok, want.Raw, want, wok, c.want, c.ok)
		}
	}
}
