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
