package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"unsafe"
)

// directOut is a flat result with a text of its own: a typed tool
// returning it writes its encoding straight into the response
// (Call.structuredFlat) unless an output schema checks it.
type directOut struct {
	S string  `json:"s"`
	T string  `json:"t,omitempty"`
	N int64   `json:"n"`
	X float64 `json:"x,omitempty"`
	B bool    `json:"b,omitzero"`
}

func (o directOut) AppendResultText(dst []byte) []byte { return append(dst, o.T...) }

// directPair registers the same typed tool twice: "direct", whose result
// takes structuredFlat, and "general", whose ValidateOutput (an output
// schema that every directOut passes) sends it through the general path
// (encode into scratch, then structured). out is what both return.
func directPair(tb testing.TB) (*Server, *directOut) {
	s := New(Config{})
	out := new(directOut)
	h := func(c *Call, in struct{}) (directOut, error) { return *out, nil }
	if err := AddTool(s, Tool{Name: "direct", Inline: true}, h); err != nil {
		tb.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "general", Inline: true, ValidateOutput: true}, h); err != nil {
		tb.Fatal(err)
	}
	return s, out
}

// TestTypedDirectResult: a typed tool's flat result written straight
// into the response is byte for byte the general path's, including when
// the flat codec declines the value (NaN: both answer the same error; -0
// with omitempty: sonic decides in both).
func TestTypedDirectResult(t *testing.T) {
	s, out := directPair(t)
	defer func() { _ = s.Shutdown(context.Background()) }()
	for i, v := range []directOut{
		{S: "hello world", T: "hello world"}, {}, {S: "a\"b\\c\n", T: "é\xff\u2028", N: -7, X: 1.5, B: true},
		{X: math.NaN()}, {X: math.Copysign(0, -1)}, {X: math.Inf(1), T: "x"}, {S: "12345678", T: "1234567"},
	} {
		*out = v
		d, g := runToolCall(t, s, "direct", ""), runToolCall(t, s, "general", "")
		if !bytes.Equal(d, g) {
			t.Errorf("%d: %+v: direct %s, general %s", i, v, d, g)
		}
		if !json.Valid(d) {
			t.Errorf("%d: not JSON: %s", i, d)
		}
	}
}

// FuzzTypedDirect: TestTypedDirectResult on any values.
func FuzzTypedDirect(f *testing.F) {
	f.Add("hello world", "hello world", int64(0), 0.0, false)
	f.Add("a\"b\\c\n\x00", "é\xff\u2028", int64(-7), 1.5, true)
	f.Add("", "", int64(math.MaxInt64), math.Copysign(0, -1), true)
	f.Add("12345678", "1234567", int64(1), 1e300, false)
	s, out := directPair(f)
	defer func() { _ = s.Shutdown(context.Background()) }()
	f.Fuzz(func(t *testing.T, str, text string, n int64, x float64, b bool) {
		*out = directOut{S: str, T: text, N: n, X: x, B: b}
		d, g := runToolCall(t, s, "direct", ""), runToolCall(t, s, "general", "")
		if !bytes.Equal(d, g) {
			t.Fatalf("%+v: direct %s, general %s", *out, d, g)
		}
	})
}

// TestFlatEncodeOmitted: the flat encoder writes each member with its ','
// and turns the first into the '{': right with no member at all, with only
// the first, and with only a later one.
func TestFlatEncodeOmitted(t *testing.T) {
	type omitted struct {
		A string `json:"a,omitempty"`
		B int    `json:"b,omitempty"`
	}
	fc := newFlatCodec(reflect.TypeFor[omitted]())
	if fc == nil {
		t.Fatal("not flat")
	}
	for _, c := range []struct {
		v    omitted
		want string
	}{{omitted{}, `{}`}, {omitted{A: "x"}, `{"a":"x"}`}, {omitted{B: 2}, `{"b":2}`}, {omitted{"x", 2}, `{"a":"x","b":2}`}} {
		got, ok := fc.encode([]byte("prefix"), unsafe.Pointer(&c.v))
		if !ok || string(got) != "prefix"+c.want {
			t.Errorf("%+v: %q %v, want %q", c.v, got, ok, "prefix"+c.want)
		}
	}
}

// TestFlatEncodeStructured: encodeStructured is structuredHead then
// encode without the closing brace, whether the first field's key joins the head (c.lead: a first
// field always written) or not (omitempty first), and declines what encode
// declines.
func TestFlatEncodeStructured(t *testing.T) {
	type omitted struct {
		A string `json:"a,omitempty"`
		B int    `json:"b,omitempty"`
	}
	fo := newFlatCodec(reflect.TypeFor[omitted]())
	fd := newFlatCodec(reflect.TypeFor[directOut]())
	if fo == nil || fd == nil || fo.lead != nil || fd.lead == nil {
		t.Fatalf("codecs %v %v", fo, fd)
	}
	check := func(name string, fc *flatCodec, p unsafe.Pointer) {
		t.Helper()
		want, wok := fc.encode([]byte("prefix"+structuredHead), p)
		got, ok := fc.encodeStructured([]byte("prefix"), p, nil)
		if ok {
			got = append(got, '}') // the caller's (structuredFlat's structTail)
		}
		if ok != wok || (ok && !bytes.Equal(got, want)) {
			t.Errorf("%s: %q %v, want %q %v", name, got, ok, want, wok)
		}
	}
	for _, v := range []omitted{{}, {A: "x"}, {B: 2}, {"x", 2}} {
		check("omitted", fo, unsafe.Pointer(&v))
	}
	for _, v := range []directOut{{}, {S: "hello world", T: "t", N: 3, X: 1.5, B: true}, {X: math.NaN()}, {S: "a\"b", X: math.Copysign(0, -1)}} {
		check("direct", fd, unsafe.Pointer(&v))
	}
}
