//go:build !race

package codec

import (
	"strings"
	"testing"
)

// TestZeroAllocs proves the hot paths allocate nothing (STYLE: "Prove it").
// Race builds instrument allocations, hence the build tag.
func TestZeroAllocs(t *testing.T) {
	toolsCall := []byte(vecToolsCall)
	deep := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":` + strings.Repeat("[", 10000) + `}}`)
	bad := []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}")
	large := largeMessage()
	escKey := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u004eame":"x","param\u017f":1}}`)
	args := []byte(`{"region":"us-west1","priority":42,"nested":{"a":{"b":[1,2]}}}`)
	buf := make([]byte, 0, 4096)
	var env Envelope
	var stack [64]byte
	cases := []struct {
		name string
		f    func()
	}{
		{"Peek tools/call", func() { _ = Peek(toolsCall, &env) }},
		{"Peek large", func() { _ = Peek(large, &env) }},
		{"Peek A9 too deep", func() { _ = Peek(deep, &env) }},
		{"Peek A8 invalid UTF-8", func() { _ = Peek(bad, &env) }},
		{"Peek escaped keys", func() { _ = Peek(escKey, &env) }},
		{"Str.Equal escaped", func() { _ = env.Name.EqualString("Name") }},
		{"LookupPath", func() { _, _ = LookupPath(args, "nested", "a", "b") }},
		{"LookupString", func() { _, _ = LookupString(args, "region") }},
		{"AppendString", func() { buf = AppendString(buf[:0], "Zürich \"x\"\n\xff\u2028") }},
		{"AppendTextResult", func() { buf = AppendTextResult(buf[:0], []byte("1 row"), false, []byte(serverInfoMeta)) }},
		{"AppendResponse", func() { buf = AppendResponse(buf[:0], []byte("2"), []byte(`{}`)) }},
		{"AppendErrorResponse", func() { buf = AppendErrorResponse(buf[:0], []byte("6"), ErrBadParams) }},
		{"AppendNotification", func() { buf = AppendNotification(buf[:0], "notifications/tools/list_changed", []byte(`{}`)) }},
		{"AppendProgress", func() { buf = AppendProgress(buf[:0], []byte(`"tok-3"`), 0.25, 1, true, "scanning") }},
		{"AppendFloat", func() { buf = AppendFloat(buf[:0], 1e-9) }},
		{"AppendHeaderValue", func() { buf = AppendHeaderValue(buf[:0], []byte("Hello, 世界")) }},
		{"DecodeHeaderValue", func() { _, _ = DecodeHeaderValue(stack[:0], []byte("=?base64?SGVsbG8sIOS4lueVjA==?=")) }},
		{"DecodeHeaderValue rejected", func() { _, _ = DecodeHeaderValue(stack[:0], []byte("=?base64?SGVsbG8?=")) }},
		{"HeaderValueNeedsEncoding", func() { _ = HeaderValueNeedsEncoding([]byte(" us-west1")) }},
	}
	for i, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("#%d %s: %v allocs/op, want 0", i, c.name, n)
		}
	}
}

// TestPeekDeepValuesAllocOncePerMessage: with MaxDepth raised past the
// skipper's inline stack, a message of many deeply nested values costs no
// more allocations than one with a single such value (the stack grows once
// per Peek, not once per value: bounded work for hostile input, A9).
func TestPeekDeepValuesAllocOncePerMessage(t *testing.T) {
	deep := strings.Repeat("[", 700) + strings.Repeat("]", 700)
	allocs := func(n int) float64 {
		var mem []string
		for j := 0; j < n; j++ {
			mem = append(mem, `"v`+string(rune('a'+j))+`":`+deep)
		}
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{` + strings.Join(mem, ",") + `}}`)
		var env Envelope
		cfg := PeekConfig{MaxDepth: 4096}
		if err := PeekWith(msg, &env, cfg); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(20, func() { _ = PeekWith(msg, &env, cfg) })
	}
	one, ten := allocs(1), allocs(10)
	if ten > one {
		t.Fatalf("10 deep values: %.0f allocations, 1 deep value: %.0f", ten, one)
	}
}
