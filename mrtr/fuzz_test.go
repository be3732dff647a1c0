package mrtr

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

var fuzzKey = bytes.Repeat([]byte{0x5a}, 32)

// FuzzOpen feeds the state decoder tokens and arguments: it must never
// panic, must refuse with one of its reasons, and may accept only a token
// whose payload it signed itself (the seeds include genuine ones, which
// must keep opening). Past inputs are in testdata/fuzz/FuzzOpen.
func FuzzOpen(f *testing.F) {
	s, err := NewSigner(Config{Keys: [][]byte{fuzzKey}, TTL: -1, MaxData: 256})
	if err != nil {
		f.Fatal(err)
	}
	b := Binding{Principal: "p", Method: "tools/call", Target: "t", Arguments: []byte(`{"a":1}`)}
	good, _ := s.Seal(b, []byte("data"))
	f.Add(good, `{"a":1}`)
	f.Add(good, `{"a":1.0}`)
	f.Add(good+"-TAMPERED", `{"a":1}`)
	f.Add("", ``)
	f.Add(".", `{}`)
	f.Add("AQ.AQ", `null`)
	f.Add(good[:len(good)/2], `[`)
	reasons := []error{ErrStateMalformed, ErrStateForeignKey, ErrStateTampered, ErrStateExpired,
		ErrStateWrongPrincipal, ErrStateWrongTarget, ErrStateWrongArguments}
	f.Fuzz(func(t *testing.T, token, args string) {
		bb := b
		bb.Arguments = []byte(args)
		data, err := s.Open(bb, token)
		if err == nil {
			// Only Seal makes payloads that verify: sealing the data
			// again for the same binding must give a token of the same
			// length that opens as well.
			again, serr := s.Seal(bb, data)
			if serr != nil || len(again) != len(token) {
				t.Fatalf("accepted %q (%q) but cannot seal it again: %v", token, data, serr)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		for _, r := range reasons {
			if errors.Is(err, r) {
				return
			}
		}
		t.Fatalf("unknown reason: %v", err)
	})
}

// FuzzArgsDigest: the digest never panics, and arguments re-encoded by
// another encoder (encoding/json: keys sorted, its own escaping, the
// number literals kept) keep their digest: a client that decodes and
// re-encodes the original params still verifies (MRTR-05).
func FuzzArgsDigest(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.50,{"b":"\u00e9"}],"c":null}`, `{"n":-0.0e+3}`, `[1e400]`, `"\ud800"`, `{"a":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d1, err := argsDigest([]byte(s))
		if err != nil || !utf8.ValidString(s) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || dec.More() {
			return
		}
		re, err := json.Marshal(v)
		if err != nil {
			return
		}
		d2, err := argsDigest(re)
		if err != nil || d1 != d2 {
			t.Fatalf("%q re-encoded as %q: digest changed (%v)", s, re, err)
		}
	})
}

// FuzzResponses: inputResponses of any shape never panic an accessor, and
// every refusal is one of the package's.
func FuzzResponses(f *testing.F) {
	f.Add(`{"k":{"action":"accept","content":{"a":1}}}`)
	f.Add(`{"k":{"role":"assistant","content":[{"type":"text","text":"x"}]}}`)
	f.Add(`{"k":{"roots":[{"uri":"file:///"}]}}`)
	f.Add(`{"k":12345}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := ParseResponses([]byte(raw))
		if err != nil {
			if !errors.Is(err, ErrResponsesMalformed) {
				t.Fatal(err)
			}
			return
		}
		check := func(err error) {
			if err != nil && !errors.Is(err, ErrResponseMissing) && !errors.Is(err, ErrResponseMalformed) {
				t.Fatalf("%q: %v", raw, err)
			}
		}
		e, err := r.Elicit("k")
		check(err)
		var m map[string]any
		check(e.Decode(&m))
		_, _ = e.String("a")
		_, err = r.Sampling("k")
		check(err)
		_, err = r.Roots("k")
		check(err)
	})
}
