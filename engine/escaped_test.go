package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// A line transport skips the newline scan of a response that
// Request.ReplyEscaped vouches for (STD-02: a message holds no raw
// newline). These tests hold the rule it rests on: only a response written
// entirely by the engine's escaping encoders is vouched for, and any other
// write — after them, or restarting the response with the same length —
// withdraws it.

// escRep keeps each answer given in the batch and what ReplyEscaped said.
type escRep struct {
	keepReply
	frames []string
	esc    []bool
}

func (r *escRep) ReplyInBatch(q *Request, f []byte) error {
	r.frames = append(r.frames, string(f))
	r.esc = append(r.esc, q.ReplyEscaped(f))
	return nil
}

type escFlatOut struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

// escDirectOut is flat with a text of its own: encoded straight into
// the response (Call.structuredFlat).
type escDirectOut struct {
	Text string `json:"text"`
}

func (o escDirectOut) AppendResultText(dst []byte) []byte { return append(dst, o.Text...) }

type escRawOut struct {
	Raw json.RawMessage `json:"raw"`
}

// rawWithNewline is raw JSON whose whitespace holds a newline, as a
// handler may hand the engine; the encoder keeps it as it is.
var rawWithNewline = json.RawMessage("[\n1]")

// padTo calls set with growing padding until the response in c.out is n
// bytes long (set writes a response whose length grows by one per byte of
// padding).
func padTo(t *testing.T, c *Call, n int, set func(pad int)) {
	set(0)
	if d := n - len(c.out); d > 0 {
		set(d)
	}
	if len(c.out) != n {
		t.Errorf("could not pad the response to %d bytes (got %d)", n, len(c.out))
	}
}

func TestReplyEscaped(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	add := func(name string, h func(c *Call) error) {
		if err := s.AddTool(Tool{Name: name, Inline: true, Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	add("text", func(c *Call) error { c.Text("a\nb \"q\""); return nil })
	add("textBytes", func(c *Call) error { c.TextBytes([]byte("a\nb")); return nil })
	add("errorText", func(c *Call) error { c.ErrorText("a\nb"); return nil })
	add("return", func(c *Call) error {
		return c.Return(map[string]any{"content": []any{}, "raw": rawWithNewline})
	})
	// Text, then Return of a raw newline padded to the same length: the
	// restart (openResult) must withdraw Text's mark, not the length.
	add("textThenReturn", func(c *Call) error {
		c.Text("abc")
		padTo(t, c, len(c.out), func(pad int) {
			raw := json.RawMessage("[\n1" + strings.Repeat(" ", pad) + "]")
			if err := c.Return(map[string]any{"r": raw}); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	// Text, then an error whose raw data holds a newline, padded to Text's
	// length: setError must withdraw the mark.
	add("textThenError", func(c *Call) error {
		c.Text(strings.Repeat("x", 40))
		n := len(c.out) // an error response is complete: nothing is added
		var e *codec.Error
		padTo(t, c, n, func(pad int) {
			e = &codec.Error{Code: codec.CodeInternalError, Message: "m", Data: []byte("[\n1" + strings.Repeat(" ", pad) + "]")}
			c.setError(e)
		})
		return e
	})
	// Text, then bytes appended by some other writer: the length moved.
	add("textThenAppend", func(c *Call) error {
		c.Text("abc")
		c.out = append(c.out[:len(c.out)-1], ",\"x\":\n1}"...)
		return nil
	})
	if err := AddTool(s, Tool{Name: "typedFlat", Inline: true}, func(c *Call, in struct{}) (escFlatOut, error) {
		return escFlatOut{Text: "a\nb", N: 7}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "typedDirect", Inline: true}, func(c *Call, in struct{}) (escDirectOut, error) {
		return escDirectOut{Text: "a\nb"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "typedRaw", Inline: true}, func(c *Call, in struct{}) (escRawOut, error) {
		return escRawOut{Raw: rawWithNewline}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		tool    string
		escaped bool
		newline bool // the response holds a raw newline (so the transport must look)
	}{
		{"text", true, false},
		{"textBytes", true, false},
		{"errorText", true, false},
		{"typedFlat", true, false},
		{"typedDirect", true, false},
		{"return", false, true},
		{"textThenReturn", false, true},
		{"textThenError", false, true},
		{"textThenAppend", false, true},
		{"typedRaw", false, true},
	} {
		sc := NewScope(s, "")
		b := sc.StartBatch()
		rep := &escRep{}
		b.SetReplier(rep)
		startInBatch(t, sc, b, batchMsg(`"id-`+tc.tool+`"`, tc.tool), &rep.keepReply)
		b.End()
		if len(rep.frames) != 1 {
			t.Fatalf("%d %s: %d answers in the batch, %v", i, tc.tool, len(rep.frames), rep.all())
		}
		f := rep.frames[0]
		if rep.esc[0] != tc.escaped {
			t.Errorf("%d %s: ReplyEscaped = %v, want %v (%s)", i, tc.tool, rep.esc[0], tc.escaped, f)
		}
		if nl := strings.IndexByte(f, '\n') >= 0; nl != tc.newline {
			t.Errorf("%d %s: raw newline in the response = %v, want %v (%q)", i, tc.tool, nl, tc.newline, f)
		}
		if !json.Valid([]byte(f)) {
			t.Errorf("%d %s: response is not JSON: %s", i, tc.tool, f)
		}
	}
}

// TestReplyEscapedOnlyItsFrame: the answer is about the response the
// engine handed over, not about another buffer of the same length.
func TestReplyEscapedOnlyItsFrame(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	var other []bool
	if err := s.AddTool(Tool{Name: "t", Inline: true, Handler: func(c *Call) error { c.Text("abc"); return nil }}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "")
	b := sc.StartBatch()
	rep := &otherRep{got: &other}
	b.SetReplier(rep)
	startInBatch(t, sc, b, batchMsg("1", "t"), &keepReply{})
	b.End()
	if len(other) != 2 || !other[0] || other[1] {
		t.Fatalf("ReplyEscaped of its frame, of a copy: %v, want [true false]", other)
	}
}

type otherRep struct{ got *[]bool }

func (r *otherRep) ReplyInBatch(q *Request, f []byte) error {
	*r.got = append(*r.got, q.ReplyEscaped(f), q.ReplyEscaped(bytes.Clone(f)))
	return nil
}
