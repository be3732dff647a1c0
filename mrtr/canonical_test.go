package mrtr

import (
	"errors"
	"strings"
	"testing"
)

// TestArgsDigestSame: argument texts that decode to the same value have
// one digest (canonical.go's rules, one case each).
func TestArgsDigestSame(t *testing.T) {
	for i, v := range [][]string{
		0:  {``, `null`, `{}`, ` { } `, "\n{}\t"},
		1:  {`{"a":1,"b":2}`, `{"b":2,"a":1}`, ` {"b" : 2 , "a" : 1} `},
		2:  {`{"s":"A"}`, `{"s":"\u0041"}`, `{"\u0073":"A"}`},
		3:  {`{"s":"é/"}`, `{"s":"\u00e9\/"}`},
		4:  {`{"n":1}`, `{"n":1.0}`, `{"n":10e-1}`, `{"n":1E0}`, `{"n":1e+0}`, `{"n":0.1e1}`, `{"n":100e-2}`},
		5:  {`{"n":0}`, `{"n":-0}`, `{"n":0.000}`, `{"n":0e10}`, `{"n":-0.0e-5}`},
		6:  {`{"n":1500}`, `{"n":1.50e+3}`, `{"n":15e2}`, `{"n":1500.000}`},
		7:  {`{"n":-2.5}`, `{"n":-25e-1}`, `{"n":-0.25e1}`},
		8:  {`{"n":1e999999999999999999999}`, `{"n":10e999999999999999999998}`},
		9:  {`{"a":1,"a":2}`, `{"a":2}`},         // the last of a repeated member
		10: {`{"s":"\ud800"}`, `{"s":"\ufffd"}`}, // a lone surrogate decodes to U+FFFD
		11: {`{"o":{"y":[1,{"q":true}],"x":null}}`, `{"o":{"x":null,"y":[1.0,{"q":true}]}}`},
	} {
		want, err := argsDigest([]byte(v[0]))
		if err != nil {
			t.Fatalf("%d: %s: %v", i, v[0], err)
		}
		for _, s := range v[1:] {
			got, err := argsDigest([]byte(s))
			if err != nil || got != want {
				t.Errorf("%d: %s and %s differ (%v)", i, v[0], s, err)
			}
		}
	}
}

// TestArgsDigestDifferent: values that differ have different digests,
// including those a float64 round trip or a careless encoding would merge
// (null is absent from the list: at the top level it is {}).
func TestArgsDigestDifferent(t *testing.T) {
	all := []string{
		`{}`, `[]`, `""`, `0`, `false`, `{"a":null}`, `{"a":false}`, `{"a":0}`, `{"a":""}`, `{"a":[]}`, `{"a":{}}`,
		`{"a":"1"}`, `{"a":1}`, `{"a":[1]}`, `{"a":[1,2]}`, `{"a":[2,1]}`, `{"a":[[1],2]}`, `{"a":[[1,2]]}`,
		`{"n":9007199254740993}`, `{"n":9007199254740992}`, `{"n":0.1}`, `{"n":0.10000000000000001}`,
		`{"n":1e400}`, `{"n":1e401}`, `{"n":-1}`, `{"n":1}`,
		`{"ab":"c"}`, `{"a":"bc"}`, `{"a":"b","c":""}`, `{"":"abc"}`,
		`{"s":"a\u0000"}`, `{"s":"a"}`, `{"A":1}`, `{"a":1,"b":1}`,
	}
	seen := map[[32]byte]string{}
	for _, s := range all {
		d, err := argsDigest([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if prev, ok := seen[d]; ok {
			t.Errorf("%s and %s have one digest", prev, s)
		}
		seen[d] = s
	}
}

func TestArgsDigestErrors(t *testing.T) {
	for _, s := range []string{`{`, `{"a":}`, `nul`, `{"a":1}x`, `'a'`, strings.Repeat("[", 20000) + strings.Repeat("]", 20000)} {
		if _, err := argsDigest([]byte(s)); !errors.Is(err, errArguments) {
			t.Errorf("%.40s: %v", s, err)
		}
	}
}

func TestCanonNumber(t *testing.T) {
	for i, v := range []struct{ in, want string }{
		0:  {"0", "0e0"},
		1:  {"-0", "0e0"},
		2:  {"1", "1e0"},
		3:  {"120", "12e1"},
		4:  {"0.5", "5e-1"},
		5:  {"-0.050", "-5e-2"},
		6:  {"1.50e+3", "15e2"},
		7:  {"1E-3", "1e-3"},
		8:  {"123456789012345678901234567890", "12345678901234567890123456789e1"},
		9:  {"1e00000000000000000000000000005", "1e5"},
		10: {"1e123456789012345678901234567890", "1e123456789012345678901234567890"},
		11: {"1.5e-123456789012345678901234567890", "15e-123456789012345678901234567891"},
		12: {"9007199254740993", "9007199254740993e0"},
	} {
		got, err := canonNumber(v.in)
		if err != nil || got != v.want {
			t.Errorf("%d: %s → %q %v, want %q", i, v.in, got, err, v.want)
		}
	}
	for _, bad := range []string{"", "-", ".5", "1.", "1e", "1e+", "+1", "1x", "0x10", "--1", "1.2.3"} {
		if _, err := canonNumber(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
