package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// oneArgs and oneOut are the reference echo's shape: one string in, one
// string out, with a text of its own (oneText says which).
type oneArgs struct {
	S string `json:"s"`
}

type oneOut struct {
	S string `json:"s"`
}

// wideArgs and wideOut are oneArgs and oneOut with a name too long for
// oneMidArr: the middle part is copied as a slice.
type wideArgs struct {
	S string `json:"a_name_long_enough_to_need_a_copy"`
}

type wideOut struct {
	S string `json:"a_name_long_enough_to_need_a_copy"`
}

func (o wideOut) AppendResultText(dst []byte) []byte { return append(dst, oneText(o.S)...) }

// oneText is the text oneOut gives: its S changed as oneMode says.
var oneText func(s string) string

func (o oneOut) AppendResultText(dst []byte) []byte { return append(dst, oneText(o.S)...) }

// onePair registers the echo twice: "one", whose result takes
// structuredFlat's one-string form (typedTool.oneMid), and "general",
// whose ValidateOutput sends the same result through the general path.
func onePair(tb testing.TB) *Server {
	s := New(Config{})
	h := func(_ *Call, in oneArgs) (oneOut, error) { return oneOut(in), nil }
	if err := AddTool(s, Tool{Name: "one", Inline: true}, h); err != nil {
		tb.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "general", Inline: true, ValidateOutput: true}, h); err != nil {
		tb.Fatal(err)
	}
	w := func(_ *Call, in wideArgs) (wideOut, error) { return wideOut(in), nil }
	if err := AddTool(s, Tool{Name: "wide", Inline: true}, w); err != nil {
		tb.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "wide-general", Inline: true, ValidateOutput: true}, w); err != nil {
		tb.Fatal(err)
	}
	if tt := s.tools["one"].args.typed; tt == nil || tt.oneMid == nil || !tt.midArr {
		tb.Fatal("one: not the one-string form with its middle as an array")
	}
	if tt := s.tools["wide"].args.typed; tt == nil || tt.oneMid == nil || tt.midArr {
		tb.Fatal("wide: not the one-string form with its middle as a slice")
	}
	return s
}

// bothSame runs args, written for oneArgs, through "one" and "general",
// and as wideArgs through "wide" and "wide-general", under id, and
// fails when a pair answers differently.
func bothSame(t *testing.T, s *Server, id, args, what string) {
	t.Helper()
	got, want := runToolCallID(t, s, id, "one", args), runToolCallID(t, s, id, "general", args)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s id %s %s:\none     %s\ngeneral %s", what, id, args, got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("%s id %s %s: not JSON: %s", what, id, args, got)
	}
	wargs := strings.Replace(args, `"s":`, `"a_name_long_enough_to_need_a_copy":`, 1)
	got, want = runToolCallID(t, s, id, "wide", wargs), runToolCallID(t, s, id, "wide-general", wargs)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s id %s %s:\nwide    %s\ngeneral %s", what, id, wargs, got, want)
	}
}

// runToolCallID is runToolCall with the request's id given.
func runToolCallID(t testing.TB, s *Server, id, name, args string) []byte {
	t.Helper()
	msg := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + strconv.Quote(name) +
		`,"arguments":` + args + `,` + testMeta + `}}`)
	return runMessage(t, s, msg)
}

// oneModes change the echo's text: the same string (written without the
// escape scan when it is 8 to 16 bytes), the same length with another
// first or last byte or a byte that needs an escape, shorter, longer,
// empty.
var oneModes = []func(string) string{
	func(s string) string { return s },
	func(s string) string {
		if s == "" {
			return s
		}
		return "#" + s[1:]
	},
	func(s string) string {
		if s == "" {
			return s
		}
		return s[:len(s)-1] + "#"
	},
	func(s string) string {
		if s == "" {
			return s
		}
		return s[:len(s)/2] + "\"" + s[len(s)/2+1:]
	},
	func(s string) string {
		if s == "" {
			return s
		}
		return s[1:]
	},
	func(s string) string { return s + "x" },
	func(string) string { return "" },
	func(s string) string { return s[:len(s)/2] + "\u2028" + s[len(s)/2:] },
}

// oneIDs are ids of every length up to 17 bytes and a long one: the
// one-string form writes an id of up to 16 bytes as its two ends.
var oneIDs = []string{`1`, `12`, `123`, `1234`, `12345`, `123456`, `1234567`, `12345678`, `123456789`, `"0123456789"`,
	`"0123456789abcd"`, `"0123456789abcde"`, `"a-uuid-7b0e6c1e-4a9c-4b59-8c1e-2d4b9a0f5e11"`}

// oneSame runs args through both tools of onePair under every id and
// mode, and fails when they answer differently.
func oneSame(t *testing.T, s *Server, args string) {
	t.Helper()
	for _, id := range oneIDs {
		for m, mode := range oneModes {
			oneText = mode
			bothSame(t, s, id, args, "mode "+strconv.Itoa(m))
		}
	}
}

// TestTypedOneResult: the reference echo's result (Out one string, with a
// ResultText) written between constant parts is byte for byte the general
// path's, for strings of every length around the word bounds (those
// recorded and plain, and escaped ones the one-pass decode leaves to the
// checked decode), every text mode, short and long ids.
func TestTypedOneResult(t *testing.T) {
	s := onePair(t)
	defer func() { _ = s.Shutdown(context.Background()) }()
	src := "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"
	for l := 0; l <= len(src); l++ {
		oneSame(t, s, `{"s":"`+src[:l]+`"}`)
	}
	for _, args := range []string{`{"s":"tab\there"}`, `{"s":"\u00e9t\u00e9 d'hiver"}`, `{"s":"quote\"d"}`, `{"s":null}`, `{}`} {
		oneSame(t, s, args)
	}
	// A large answer: the response grows past the Call's buffer.
	oneSame(t, s, `{"s":"`+strings.Repeat("z", 3000)+`"}`)
	oneText = oneModes[0]
	if got := runToolCallID(t, s, "7", "one", `{"s":"hello world"}`); !bytes.Contains(got,
		[]byte(`"id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"s":"hello world"},"isError":false,"_meta":`)) {
		t.Errorf("echo: %s", got)
	}
}

// FuzzTypedOne: TestTypedOneResult on any string.
func FuzzTypedOne(f *testing.F) {
	for _, s := range []string{"hello world", "", "12345678", "1234567890abcdef", "1234567890abcdefg", "é", "a\"b"} {
		f.Add(s, uint8(0))
	}
	s := onePair(f)
	defer func() { _ = s.Shutdown(context.Background()) }()
	f.Fuzz(func(t *testing.T, str string, mode uint8) {
		args, err := json.Marshal(oneArgs{S: str})
		if err != nil || !validArgs(string(args)) {
			return
		}
		oneText = oneModes[int(mode)%len(oneModes)]
		bothSame(t, s, "1", string(args), "mode "+strconv.Itoa(int(mode)))
	})
}

// TestTypedOneTails: the one-string echo's tail (oneTail) at every length
// from 64 bytes to past 192, set by the server's name, against the
// general path. From 64 to 192 bytes it is written as two overlapping
// arrays and past 128 a third between them (tailArr), elsewhere by copy.
func TestTypedOneTails(t *testing.T) {
	oneText = oneModes[0]
	h := func(_ *Call, in oneArgs) (oneOut, error) { return oneOut(in), nil }
	seen := map[int]bool{}
	for l := 1; l <= 160; l++ {
		s := New(Config{Name: strings.Repeat("n", l-1) + "z"})
		if err := AddTool(s, Tool{Name: "one", Inline: true}, h); err != nil {
			t.Fatal(err)
		}
		if err := AddTool(s, Tool{Name: "general", Inline: true, ValidateOutput: true}, h); err != nil {
			t.Fatal(err)
		}
		tt := s.tools["one"].args.typed
		k := len(tt.oneTail)
		if tt.tailArr != (k >= 64 && k <= 192) {
			t.Fatalf("name %d: tail of %d bytes, tailArr %v", l, k, tt.tailArr)
		}
		seen[min((k+63)/64, 4)] = true // 2: two arrays, 3: three, 4: a copy
		for _, id := range []string{"1", "12345678901", `"a-longer-string-id-0123456789"`} {
			for _, v := range []string{"hello wo", "hello world", "hello world12345", "h", "hello world, a longer one"} {
				args := `{"s":"` + v + `"}`
				got, want := runToolCallID(t, s, id, "one", args), runToolCallID(t, s, id, "general", args)
				if !bytes.Equal(got, want) {
					t.Fatalf("name %d (tail %d) id %s %s:\none     %s\ngeneral %s", l, len(tt.oneTail), id, args, got, want)
				}
			}
		}
		_ = s.Shutdown(context.Background())
	}
	if !seen[2] || !seen[3] || !seen[4] {
		t.Fatalf("tails by 64 bytes: %v, want 2, 3 and 4", seen)
	}
}
