package engine

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// zorderArgs has its fields out of the schema's (sorted) order, so the
// one-pass check and decode maps schema names to fields (fusedSlot.field).
type zorderArgs struct {
	Z string  `json:"z"`
	A int     `json:"a,omitempty"`
	M bool    `json:"m"`
	U float64 `json:"u,omitzero"`
}

// openArgs is decoded against plainOpen, an open schema given by the
// tool, which names each of its fields ("a" of any type).
type openArgs struct {
	S string  `json:"s"`
	I int     `json:"i"`
	N float64 `json:"n"`
	B bool    `json:"b"`
	A string  `json:"a"`
}

// prefixArgs has names of 1 to 9 bytes, each the one before and a byte,
// so that checkDecode's slot lookup must tell each length and each last
// byte apart.
type prefixArgs struct {
	T1 string `json:"t,omitempty"`
	T2 int    `json:"te,omitempty"`
	T3 string `json:"tex,omitempty"`
	T4 string `json:"text,omitempty"`
	T5 bool   `json:"textu,omitempty"`
	T6 string `json:"textua,omitempty"`
	T7 int    `json:"textual,omitempty"`
	T8 string `json:"textuals,omitempty"`
	T9 string `json:"textualsx,omitempty"`
}

// longArgs has names of 10 to 17 bytes (two words, and one past them
// compared as a string), each a prefix of the next, and the integer kinds
// checkDecode's loop decodes itself (int, int64; the other kinds have
// ranges in their schema, which is then not flat).
type longArgs struct {
	N10 string `json:"abcdefghij,omitempty"`
	N15 int64  `json:"abcdefghijklmno,omitempty"`
	N16 int    `json:"abcdefghijklmnop,omitempty"`
	N17 string `json:"abcdefghijklmnopq,omitempty"`
	B   bool   `json:"b,omitempty"`
}

// anyIntArgs reads plainOpen's "a", of any type, into an int, and its
// "middle" into an int64: a value of another type reaches checkDecode's
// integer decode, which must decline it as the flat decode does.
type anyIntArgs struct {
	A int   `json:"a"`
	M int64 `json:"middle"`
}

// fusedPairs registers each typed tool twice: "<name>", whose handler
// checks and decodes the arguments Peek recorded in one pass
// (typedTool.checkDecode), and "<name>-checked", the same tool with that
// pass turned off (callTool checks, then the handler decodes), so that
// both must answer alike.
// longOpen is longArgs' schema, open (any other member passes).
const longOpen = `{"type":"object","properties":{"abcdefghij":{"type":"string"},"abcdefghijklmno":{"type":"integer"},` +
	`"abcdefghijklmnop":{"type":"integer"},"abcdefghijklmnopq":{"type":"string"},"b":{"type":"boolean"}}}`

func fusedPairs(tb testing.TB) *Server {
	s := New(Config{})
	echo := func(_ *Call, in identityArgs) (identityArgs, error) { return in, nil }
	zecho := func(_ *Call, in zorderArgs) (zorderArgs, error) { return in, nil }
	oecho := func(_ *Call, in openArgs) (openArgs, error) { return in, nil }
	pecho := func(_ *Call, in prefixArgs) (prefixArgs, error) { return in, nil }
	lecho := func(_ *Call, in longArgs) (longArgs, error) { return in, nil }
	aecho := func(_ *Call, in anyIntArgs) (anyIntArgs, error) { return in, nil }
	for _, name := range []string{"anyint", "anyint-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true, InputSchema: []byte(plainOpen)}, aecho); err != nil {
			tb.Fatal(err)
		}
	}
	for _, name := range []string{"long", "long-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true}, lecho); err != nil {
			tb.Fatal(err)
		}
	}
	// longArgs with an open schema: a member it does not know is
	// passed over, so a name past 16 bytes must not be taken for one.
	for _, name := range []string{"longopen", "longopen-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true, InputSchema: []byte(longOpen)}, lecho); err != nil {
			tb.Fatal(err)
		}
	}
	for _, name := range []string{"pre", "pre-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true}, pecho); err != nil {
			tb.Fatal(err)
		}
	}
	for _, name := range []string{"id", "id-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true}, echo); err != nil {
			tb.Fatal(err)
		}
	}
	for _, name := range []string{"z", "z-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true}, zecho); err != nil {
			tb.Fatal(err)
		}
	}
	for _, name := range []string{"open", "open-checked"} {
		if err := AddTool(s, Tool{Name: name, Inline: true, InputSchema: []byte(plainOpen)}, oecho); err != nil {
			tb.Fatal(err)
		}
	}
	for _, name := range []string{"id", "z", "open", "pre", "long", "longopen", "anyint"} {
		if s.tools[name].args.typed == nil {
			tb.Fatalf("%s: not fused", name)
		}
		s.tools[name+"-checked"].args.typed = nil
	}
	return s
}

// fusedSame runs args through each pair of fusedPairs and fails when
// the two answer differently, or count refused arguments differently.
func fusedSame(t *testing.T, s *Server, args string) {
	t.Helper()
	for _, name := range []string{"id", "z", "open", "pre", "long", "longopen", "anyint"} {
		n0 := s.stats.InvalidArguments.Load()
		got := runToolCall(t, s, name, args)
		n1 := s.stats.InvalidArguments.Load()
		want := runToolCall(t, s, name+"-checked", args)
		n2 := s.stats.InvalidArguments.Load()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s %s:\none pass %s\nchecked  %s", name, args, got, want)
		}
		if n1-n0 != n2-n1 {
			t.Fatalf("%s %s: InvalidArguments +%d in one pass, +%d checked", name, args, n1-n0, n2-n1)
		}
	}
}

// fusedSeeds add to plainSeeds arguments for zorderArgs: in range or not,
// repeated, failing, null.
var fusedSeeds = []string{
	`{"z":"x","m":true}`, `{"m":false,"z":"","a":-128,"u":65535}`, `{"z":"x","m":true,"a":99999999999999999999}`,
	`{"z":"x","m":true,"u":1e400}`, `{"z":"x","m":true,"a":1,"a":2}`, `{"z":null,"m":true}`, `{"z":"x"}`,
	`{"z":"x","m":1}`, `{"z":"x","m":true,"q":1}`, `{"z":"x","m":true,"u":"1"}`, `{"s":"x","i":99999999999999999999}`,
	`{"s":"x","i":1,"a":5}`, `{"s":"x","i":1,"n":1}`, `{"s":"x","i":1,"b":null}`, `{"j":0,"s":"x"}`,
	// prefixArgs' names: each length, in and out of order, one a byte
	// longer or shorter or another last byte, a short one last.
	`{"t":"a","te":2,"tex":"c","text":"d","textu":true,"textua":"f","textual":7,"textuals":"h","textualsx":"i"}`,
	`{"textualsx":"i","textuals":"h","textual":7,"textua":"f","textu":false,"text":"d","tex":"c","te":2,"t":"a"}`,
	`{"text":"hello world","t":"x"}`, `{"tex":"x"}`, `{"texs":"x"}`, `{"textuals":"x","textualz":"y"}`, `{"textualsxy":"x"}`,
	`{"t":1}`, `{"te":"x"}`, `{"textu":1}`, `{"u":"x","t":"y"}`, `{"":"x","t":"y"}`, `{"a":1,"t":"y"}`,
	`{"tz":2}`, `{"tez":"c"}`, `{"textz":true}`, `{"textuz":"f"}`, `{"textuaz":7}`, `{"zextual":7}`, `{"zextualsx":"i"}`,
	// longArgs' names and integers: 18 digits (decoded in the loop), 19
	// (left to checkDecodeAll), booleans, a name a byte short of or past
	// a slot's or with another first or last byte, strings of 7 to 17
	// bytes.
	`{"abcdefghij":"12345678","abcdefghijklmno":999999999999999999,"abcdefghijklmnop":123456789012345678}`,
	`{"abcdefghijklmnop":9223372036854775807,"abcdefghijklmno":9223372036854775808}`,
	`{"abcdefghijklmnopq":"1234567890abcdefg","abcdefghij":"1234567"}`, `{"abcdefghijklmnopq":"x","abcdefghijklmnop":0}`,
	`{"abcdefghijklmn":1}`, `{"abcdefghijk":"x"}`, `{"abcdefghiz":"x"}`, `{"abcdefghijklmnz":1}`, `{"zbcdefghij":"x"}`, `{"abcdefghijklmnopqr":"x"}`, `{"abcdefghijklmnoz":1}`, `{"zbcdefghijklmnop":1}`,
	`{"b":true,"abcdefghij":"x"}`, `{"b":false}`, `{"b":1}`, `{"abcdefghij":"1234567890abcdef","b":null}`,
	// anyIntArgs: plainOpen's "a" (any type) as an int.
	`{"s":"x","i":1,"a":true}`, `{"s":"x","i":1,"a":false}`, `{"s":"x","i":1,"a":"12"}`, `{"s":"x","i":1,"a":12,"middle":34}`,
	`{"s":"x","i":1,"a":null}`, `{"s":"x","i":1,"a":999999999999999999}`,
	`{"abcdefghijklmno":1,"abcdefghijklmno":2}`, `{"abcdefghijklmnop":null,"abcdefghij":null}`, `{"abcdefghij":true}`,
	// A string value of 16, 17 and 18 bytes under a name of up to 16
	// (checkDecode takes 1 to 16 bytes in its loop, by their ends).
	`{"abcdefghij":"1234567890abcdef"}`, `{"abcdefghij":"1234567890abcdefg"}`, `{"abcdefghij":"1234567890abcdefgh"}`,
}

// TestTypedFused: a typed tool whose arguments Peek recorded checks and
// decodes them in one pass, and answers every case as the check and
// decode one after the other do: passing (every field kind, fields out
// of the schema's order, an open schema), refused by the schema (SEP-1303:
// a tool error result, counted), left to the compiled schema (a repeated
// or unknown member), declined by the flat decode (out of range, or a
// number for a string of an any-type property: sonic's verdict, also a
// tool error result).
func TestTypedFused(t *testing.T) {
	s := fusedPairs(t)
	defer func() { _ = s.Shutdown(context.Background()) }()
	for _, args := range append(append([]string{}, plainSeeds...), fusedSeeds...) {
		if validArgs(args) {
			fusedSame(t, s, args)
		}
	}
	// The answers are the ones expected, not only the same.
	for i, c := range []struct{ tool, args, want string }{
		{"id", `{"s":"hello world","i":3,"b":true,"f":0,"t":"x"}`, `"structuredContent":{"b":true,"f":0,"i":3,"s":"hello world","t":"x"}`},
		{"z", `{"u":7,"m":true,"z":"q","a":-3}`, `"structuredContent":{"z":"q","a":-3,"m":true,"u":7}`},
		{"z", `{"m":true}`, `"isError":true`},
		{"z", `{"z":"q","m":"yes"}`, `"isError":true`},
		{"z", `{"z":"q","m":true,"a":99999999999999999999}`, `arguments.a: expected integer, got number"}],"isError":true`},
		{"open", `{"s":"x","i":1,"a":5}`, `arguments.a: expected string, got number"}],"isError":true`},
		{"open", `{"s":"x","i":1,"zz":[1]}`, `"structuredContent":{"s":"x","i":1,"n":0,"b":false,"a":""}`},
		{"pre", `{"textuals":"h","te":2,"t":"a","textual":7}`, `"structuredContent":{"t":"a","te":2,"textual":7,"textuals":"h"}`},
		{"pre", `{"tex":"c","textualsx":"i","textua":"f","t":"a"}`, `"structuredContent":{"t":"a","tex":"c","textua":"f","textualsx":"i"}`},
		{"long", `{"abcdefghijklmnop":123456789012345678,"abcdefghijklmno":7,"abcdefghij":"1234567890abcdef"}`,
			`"structuredContent":{"abcdefghij":"1234567890abcdef","abcdefghijklmno":7,"abcdefghijklmnop":123456789012345678}`},
		{"long", `{"abcdefghijklmnopq":"q","b":1}`, `"isError":true`},
		{"long", `{"abcdefghijklmnopq":"q","b":true}`, `"structuredContent":{"abcdefghijklmnopq":"q","b":true}`},
		{"longopen", `{"abcdefghijklmnopq":"q","b":true}`, `"structuredContent":{"abcdefghijklmnopq":"q","b":true}`},
		{"longopen", `{"abcdefghijklmnopqr":"q","abcdefghij":"x"}`, `"structuredContent":{"abcdefghij":"x"}`},
		{"long", `{"abcdefghij":"1234567890abcdefg"}`, `"structuredContent":{"abcdefghij":"1234567890abcdefg"}`},
		{"long", `{"abcdefghij":"1234567890abcdefgh","b":true}`, `"structuredContent":{"abcdefghij":"1234567890abcdefgh","b":true}`},
		{"long", `{"abcdefghij":"","b":true}`, `"structuredContent":{"b":true}`},
	} {
		if got := runToolCall(t, s, c.tool, c.args); !bytes.Contains(got, []byte(c.want)) {
			t.Errorf("%d: %s %s: %s, want %s in it", i, c.tool, c.args, got, c.want)
		}
	}
}

// TestTypedFuseOnlyOwn: only AddTool's own registration of its handler
// checks in the handler; the same Tool registered again by Server.AddTool
// (its handler could be anything) is checked by callTool, as is a typed
// tool whose schema does not name every field of In, or has no flat form.
func TestTypedFuseOnlyOwn(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	h := func(_ *Call, in identityArgs) (identityArgs, error) { return in, nil }
	if err := AddTool(s, Tool{Name: "typed"}, h); err != nil {
		t.Fatal(err)
	}
	if s.tools["typed"].args.typed == nil {
		t.Fatal("AddTool: not fused")
	}
	again := *s.tools["typed"]
	again.Name = "again"
	if err := s.AddTool(again); err != nil {
		t.Fatal(err)
	}
	if s.tools["again"].args.typed != nil {
		t.Fatal("Server.AddTool of a typed tool's Tool: fused")
	}
	for i, schema := range []string{
		`{"type":"object","properties":{"s":{"type":"string"}}}`,               // b, f, i, j, t not named
		`{"type":"object","properties":{"s":{"type":"string","minLength":1}}}`, // not flat
	} {
		if err := AddTool(s, Tool{Name: "own", InputSchema: []byte(schema)}, h); err != nil {
			t.Fatal(err)
		}
		if s.tools["own"].args.typed != nil {
			t.Errorf("%d: %s: fused", i, schema)
		}
	}
}

// FuzzTypedFused: TestTypedFused's comparison on any arguments.
func FuzzTypedFused(f *testing.F) {
	for _, args := range append(append([]string{}, plainSeeds...), fusedSeeds...) {
		f.Add(args)
	}
	s := fusedPairs(f)
	defer func() { _ = s.Shutdown(context.Background()) }()
	f.Fuzz(func(t *testing.T, args string) {
		if !validArgs(args) {
			return
		}
		fusedSame(t, s, args)
	})
}

// validArgs reports whether runToolCall can send args (Peek reads the
// message it makes).
func validArgs(args string) bool {
	var env codec.Envelope
	return codec.Peek([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"id","arguments":`+args+`,`+testMeta+`}}`), &env) == nil
}

// TestStrChunkPlain: only the strings the one-pass decode copied from
// recorded members count as plain (written without the escape scan); the
// strings a decode that checks them made do not, nor any after a new
// chunk replaced the one they are in, nor strings elsewhere.
func TestStrChunkPlain(t *testing.T) {
	var ch strChunk
	a := ch.string([]byte("before")) // not from checkDecode
	ch.lo = len(ch.b)
	b := ch.string([]byte("plain one"))
	ch.hi = len(ch.b)
	c := ch.string([]byte("after\u2028")) // a checked decode's, after the range
	for i, x := range []struct {
		s    string
		want bool
	}{{a, false}, {b, true}, {b[2:5], true}, {c, false}, {"plain one", false}, {"", false}, {b + "x", false}} {
		if got := ch.plain(x.s); got != x.want {
			t.Errorf("%d: plain(%q) = %v", i, x.s, got)
		}
	}
	for len(ch.b)+strChunkMax <= cap(ch.b) {
		ch.string([]byte("filler: more than thirty bytes."))
	}
	ch.string([]byte("filler: more than thirty bytes.")) // a new chunk
	if ch.plain(b) || ch.lo != 0 || ch.hi != 0 {
		t.Errorf("after a new chunk: plain(b) %v, lo %d, hi %d", ch.plain(b), ch.lo, ch.hi)
	}
	var nilch *strChunk
	if nilch.plain(b) {
		t.Error("nil chunk: plain")
	}
}

// TestStrChunkPlainBelow: a string that ends exactly where the chunk
// begins (the previous object of the same size class, say) is not in the
// plain range. An offset taken as the difference of the two addresses
// wraps around for it, to exactly the string's length, and read as plain
// it would be written into the response without its escapes.
func TestStrChunkPlainBelow(t *testing.T) {
	mem := make([]byte, 2*strChunkSize)
	copy(mem, strings.Repeat(`"\`, strChunkSize/2))
	ch := strChunk{b: mem[strChunkSize:strChunkSize:len(mem)]}
	ch.lo = 0
	ch.string([]byte("plain one"))
	ch.hi = len(ch.b)
	below := unsafe.String(&mem[strChunkSize-8], 8) // ends at &ch.b[0]
	if ch.plain(below) {
		t.Fatalf("plain(%q) for a string just below the chunk", below)
	}
	var f flatField
	f.kind = reflect.String
	want := codec.AppendString(nil, below)
	if got, _ := appendField(nil, &f, unsafe.Pointer(&below), &ch); !bytes.Equal(got, want) {
		t.Errorf("appendField wrote %s, want %s", got, want)
	}
}

// TestShortCopies: appendQuoted, strChunk.string and openText copy the
// usual short string by words (8 to 16 bytes) and everything else as
// before; every length around those bounds, with and without room in dst,
// gives the same bytes as the appends.
func TestShortCopies(t *testing.T) {
	src := "abcdefghijklmnopqrstuvwxyz0123456789"
	for l := 0; l <= len(src); l++ {
		s := src[:l]
		for _, room := range []int{0, 1, l + 1, l + 2, l + 40} {
			dst := make([]byte, 3, 3+room)
			copy(dst, "x,y")
			got := appendQuoted(dst, s)
			if want := `x,y"` + s + `"`; string(got) != want {
				t.Fatalf("appendQuoted %d room %d: %q, want %q", l, room, got, want)
			}
		}
		var ch strChunk
		_ = ch.string([]byte("ahead"))
		if got := ch.string([]byte(s)); got != s {
			t.Fatalf("strChunk.string %d: %q", l, got)
		}
		if l > 0 && string(ch.b) != "ahead"+s && l <= strChunkMax {
			t.Fatalf("strChunk %d holds %q", l, ch.b)
		}
	}
	for _, id := range []string{`1`, `12`, `123`, `1234`, `12345`, `1234567`, `12345678`, `123456789`, `"0123456789abcd"`, `"0123456789abcde"`, `"a-uuid-7b0e6c1e-4a9c-4b59-8c1e-2d4b9a0f5e11"`, ``} {
		for _, keep := range []int{0, 8, 200} {
			c := &Call{out: make([]byte, 0, keep)}
			c.env.ID = []byte(id)
			if got, want := string(c.openText()), responseHead+id+textHead; got != want {
				t.Fatalf("openText id %q cap %d: %q, want %q", id, keep, got, want)
			}
		}
	}
}

// TestFusedNameWords: checkDecode finds each recorded name of 1 to 9
// bytes in its own slot and decodes it, whatever
// the member's position (a short name last has only `":`, a value and
// '}' after it); a name one byte longer or shorter than a slot's, or
// with another last byte, is in none (the closed schema then leaves the
// verdict to checkArgs).
func TestFusedNameWords(t *testing.T) {
	typ := reflect.TypeFor[prefixArgs]()
	a := inputSchema(t, typ)
	tt := &typedTool{in: newFlatCodec(typ)}
	if !tt.fuse(a.flat) {
		t.Fatal("not fused")
	}
	for i, c := range []struct {
		args string
		ok   bool
		want prefixArgs
	}{
		{`{"t":"a","te":2,"tex":"c","text":"d"}`, true, prefixArgs{T1: "a", T2: 2, T3: "c", T4: "d"}},
		{`{"textu":true,"textua":"f","textual":7,"textuals":"h"}`, true, prefixArgs{T5: true, T6: "f", T7: 7, T8: "h"}},
		{`{"textualsx":"i","text":"d","te":2,"t":"a"}`, true, prefixArgs{T9: "i", T4: "d", T2: 2, T1: "a"}},
		{`{"textuals":"h","tex":"c","textu":true,"t":"a"}`, true, prefixArgs{T8: "h", T3: "c", T5: true, T1: "a"}},
		{`{"t":"a"}`, true, prefixArgs{T1: "a"}},
		{`{}`, true, prefixArgs{}},
		{`{"text":"d","texs":"x"}`, false, prefixArgs{}},
		{`{"textualsxy":"x"}`, false, prefixArgs{}},
		{`{"textualz":"x","t":"a"}`, false, prefixArgs{}},
		{`{"t":"a","u":1}`, false, prefixArgs{}},
		{`{"t":"a","":1}`, false, prefixArgs{}},
		// Another last or first byte, for each length (wordEnds' two
		// loads: the last byte is only in the second from 5 bytes on).
		{`{"tz":2}`, false, prefixArgs{}}, {`{"tez":"c"}`, false, prefixArgs{}}, {`{"textz":true}`, false, prefixArgs{}},
		{`{"textuz":"f"}`, false, prefixArgs{}}, {`{"textuaz":7}`, false, prefixArgs{}}, {`{"textualz":"h"}`, false, prefixArgs{}},
		{`{"zextual":7}`, false, prefixArgs{}}, {`{"zextualsx":"i"}`, false, prefixArgs{}},
	} {
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pre","arguments":` + c.args + `}}`
		var env codec.Envelope
		if err := codec.Peek([]byte(msg), &env); err != nil || env.PlainArguments() < 0 {
			t.Fatalf("%d: not recorded (%v)", i, err)
		}
		var in prefixArgs
		var ch strChunk
		if ok := tt.checkDecode(&env, env.PlainArguments(), unsafe.Pointer(&in), &ch); ok != c.ok || ok && in != c.want {
			t.Errorf("%d: %s: checkDecode %v %+v, want %v %+v", i, c.args, ok, in, c.ok, c.want)
		}
	}
}

// inputSchema is the compiled input schema the engine derives for typ, as
// AddTool derives it; tb fails when there is none.
func inputSchema(tb testing.TB, typ reflect.Type) *argSchema {
	tb.Helper()
	sch, err := schemaFor(typ, schemaInput)
	if err != nil {
		tb.Fatal(err)
	}
	a, err := compileArgSchema(sch)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestFusedStrings: checkDecode's loop copies a string of up to 16 bytes
// into the chunk as its two ends; every length from 0 to 40, at every
// amount of room left in the chunk, gives the string, in the plain range
// when the chunk holds it, and leaves the bytes handed out before
// unchanged.
func TestFusedStrings(t *testing.T) {
	typ := reflect.TypeFor[prefixArgs]()
	tt := &typedTool{in: newFlatCodec(typ)}
	if !tt.fuse(inputSchema(t, typ).flat) {
		t.Fatal("not fused")
	}
	src := "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
	for l := 0; l <= len(src); l++ {
		for fill := strChunkSize - 40; fill <= strChunkSize; fill++ {
			ch := strChunk{b: make([]byte, 0, strChunkSize)}
			for i := 0; i < fill; i++ {
				ch.b = append(ch.b, byte('!'+i%64))
			}
			orig, before := ch.b, string(ch.b)
			msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pre","arguments":{"text":"` + src[:l] + `"}}}`
			var env codec.Envelope
			if err := codec.Peek([]byte(msg), &env); err != nil || env.PlainArguments() < 0 {
				t.Fatalf("%d: not recorded (%v)", l, err)
			}
			var in prefixArgs
			if !tt.checkDecode(&env, env.PlainArguments(), unsafe.Pointer(&in), &ch) || in.T4 != src[:l] {
				t.Fatalf("len %d fill %d: %q", l, fill, in.T4)
			}
			if string(orig) != before {
				t.Fatalf("len %d fill %d: the chunk's earlier bytes changed", l, fill)
			}
			if l > 0 && l <= strChunkMax && !ch.plain(in.T4) {
				t.Fatalf("len %d fill %d: %q not in the plain range", l, fill, in.T4)
			}
		}
	}
}
