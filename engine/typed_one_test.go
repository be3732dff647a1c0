package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// oneArgs and oneOut are the reference echo's shape: one string in, one
// string out, with a text of its own (oneText says which).
type oneArgs struct {
	S string `json:"s"`
}

type oneOut struct {
	S string `json:"s"`
}

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
	if tt := s.tools["one"].args.typed; tt == nil || tt.oneMid == nil {
		tb.Fatal("one: not the one-string form")
	}
	return s
}

// runToolCallID is runToolCall with the request's id given.
func runToolCallID(t testing.TB, s *Server, id, name, args string) []byte {
	t.Helper()
	msg := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + strconv.Quote(name) +
		`,"arguments":` + args + `,` + testMeta + `}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatalf("peek %s: %v", msg, err)
	}
	rep := &capture{done: make(chan struct{})}
	r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatalf("check: %s", e.Message)
	}
	r.Run()
	<-rep.done
	return rep.reply
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

// oneSame runs args through both tools of onePair under every id and
// mode, and fails when they answer differently.
func oneSame(t *testing.T, s *Server, args string) {
	t.Helper()
	for _, id := range []string{`1`, `1234567`, `"0123456789abcdef"`, `"a-uuid-7b0e6c1e-4a9c-4b59-8c1e-2d4b9a0f5e11"`} {
		for m, mode := range oneModes {
			oneText = mode
			got, want := runToolCallID(t, s, id, "one", args), runToolCallID(t, s, id, "general", args)
			if !bytes.Equal(got, want) {
				t.Fatalf("id %s mode %d %s:\none     %s\ngeneral %s", id, m, args, got, want)
			}
			if !json.Valid(got) {
				t.Fatalf("id %s mode %d %s: not JSON: %s", id, m, args, got)
			}
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
		got, want := runToolCallID(t, s, "1", "one", string(args)), runToolCallID(t, s, "1", "general", string(args))
		if !bytes.Equal(got, want) {
			t.Fatalf("mode %d %s:\none     %s\ngeneral %s", mode, args, got, want)
		}
	})
}
