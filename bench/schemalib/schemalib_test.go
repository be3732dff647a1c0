package schemalib

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpwire/mcpwire/codec"
)

// cases: the reference echo schema and a richer one, with valid arguments.
var cases = []struct{ name, schema, args string }{
	{"echo", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":"hello world"}`},
	{"rich", `{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":100},` +
		`"tags":{"type":"array","items":{"type":"string"}},"mode":{"enum":["fast","exact"]}},"required":["query"],"additionalProperties":false}`,
		`{"query":"SELECT 1","limit":10,"tags":["a","b"],"mode":"fast"}`},
}

func santhosh(tb testing.TB, schema string) *sjs.Schema {
	doc, err := sjs.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		tb.Fatal(err)
	}
	c := sjs.NewCompiler()
	c.DefaultDraft(sjs.Draft2020)
	if err := c.AddResource("urn:bench", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile("urn:bench")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func google(tb testing.TB, schema string) *gjs.Resolved {
	var s gjs.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		tb.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// BenchmarkValidate: decode the raw arguments (as a server must: they
// arrive as bytes) and validate them. santhosh takes json.Number
// (codec.DecodeAny); google takes float64 (encoding/json's any).
func BenchmarkValidate(b *testing.B) {
	for _, c := range cases {
		args := []byte(c.args)
		b.Run(c.name+"/santhosh", func(b *testing.B) {
			s := santhosh(b, c.schema)
			b.ReportAllocs()
			for b.Loop() {
				v, err := codec.DecodeAny(args)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/google", func(b *testing.B) {
			r := google(b, c.schema)
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.NewDecoder(bytes.NewReader(args)).Decode(&v); err != nil {
					b.Fatal(err)
				}
				if err := r.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/santhosh-validate-only", func(b *testing.B) {
			s := santhosh(b, c.schema)
			v, _ := codec.DecodeAny(args)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/google-validate-only", func(b *testing.B) {
			r := google(b, c.schema)
			var v any
			_ = json.Unmarshal(args, &v)
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Validate(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestErrorShapes records why santhosh's errors are the ones to build a
// peer-visible message from: they are structured (instance location and
// a typed kind), while google's is a string that quotes the instance's
// value.
func TestErrorShapes(t *testing.T) {
	const secret = "S3CR3T"
	args := []byte(`{"text":["` + secret + `"]}`)
	v, _ := codec.DecodeAny(args)
	err := santhosh(t, cases[0].schema).Validate(v)
	ve, ok := err.(*sjs.ValidationError)
	if !ok || len(ve.Causes) == 0 || strings.Join(ve.Causes[0].InstanceLocation, "/") != "text" {
		t.Fatalf("santhosh: %#v", err)
	}
	var w any
	_ = json.Unmarshal(args, &w)
	gerr := google(t, cases[0].schema).Validate(w)
	if gerr == nil || !strings.Contains(gerr.Error(), secret) {
		t.Errorf("google's message no longer quotes the value (the reason to prefer santhosh is gone): %v", gerr)
	}
}
