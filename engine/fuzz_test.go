package engine

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// flatFuzzSchemas are flat schemas (each must flatten) checked both ways.
var flatFuzzSchemas = []string{
	echoSchema,
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`,
	`{"type":"object","properties":{"n":{"type":"number"},"f":{"type":"boolean"},"z":{"type":"null"},"o":{"type":"object"},"l":{"type":"array"}},"required":["n"]}`,
	`{"type":"object","properties":{"we ird":{"type":"string","description":"d"},"x":{"description":"any"}},"required":["we ird","y","x"],"additionalProperties":true}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"i":{"type":"integer","x-mcp-header":"I"}}}`,
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
		if !json.Valid([]byte(args)) || !utf8.ValidString(args) {
			return
		}
		for i, a := range flats {
			fe, ok := a.flat.check([]byte(args))
			if !ok {
				continue // left to the compiled schema
			}
			ce := a.checkCompiled([]byte(args))
			if (fe == nil) != (ce == nil) || (fe != nil && fe.Message != ce.Message) {
				t.Fatalf("schema %d, args %s: flat %v, compiled %v", i, args, fe, ce)
			}
		}
	})
}

// FuzzArgMessage: whatever the arguments, a refusal is one bounded line
// that never contains a long run of the input.
func FuzzArgMessage(f *testing.F) {
	for _, s := range []string{`{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, `{"l":[1,2,{"k":"v"}]}`, `{"\u2028":1}`, `{"a\n":[[[]]]}`} {
		f.Add(s)
	}
	a, err := compileArgSchema([]byte(`{"type":"object","properties":{"a":{"type":"integer","enum":[1,2]},"l":{"type":"array","items":{"type":"integer"}}},"additionalProperties":{"type":"string","pattern":"^[a-z]*$"}}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) {
			return
		}
		e := a.check([]byte(args))
		if e == nil {
			return
		}
		if len(e.Message) > maxArgMessage || !utf8.ValidString(e.Message) {
			t.Fatalf("message %q", e.Message)
		}
		for _, c := range e.Message {
			if c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029 {
				t.Fatalf("control character in %q", e.Message)
			}
		}
	})
}
