package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// echoFixture is the standard fixture (tools/call echo {"text":"hello
// world"} with what real clients put in _meta).
const echoFixture = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`

// echoSchema is the reference server's echo schema.
const echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// nopReplier drops everything without allocating.
type nopReplier struct{ n int }

func (*nopReplier) Notify(*Request, []byte) error       { return nil }
func (r *nopReplier) Reply(*Request, []byte, int) error { r.n++; return nil }
func (*nopReplier) Done(*Request)                       {}

// echoSchemaMinLength is echoSchema with a keyword the flat check leaves
// to the compiled schema.
const echoSchemaMinLength = `{"type":"object","properties":{"text":{"type":"string","minLength":1}},"required":["text"]}`

// BenchmarkToolArgs is one echo tools/call through Begin, Check and Run
// (inline: no transport, no worker hand-off), with the arguments checked
// against the reference echo schema (validate: the flat check on the raw
// bytes), against it with a minLength (compiled: decoded and validated by
// the library), against the default
// {"type":"object"} (anyObject: the first byte only), and unchecked
// (SkipValidation). The difference between validate and skip is what
// validation costs per call.
func BenchmarkToolArgs(b *testing.B) {
	for _, bc := range []struct {
		name   string
		schema string
		skip   bool
	}{
		{"validate", echoSchema, false},
		{"compiled", echoSchemaMinLength, false},
		{"anyObject", ``, false},
		{"skip", echoSchema, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(Config{})
			defer func() { _ = s.Shutdown(context.Background()) }()
			if err := s.AddTool(Tool{Name: "echo", Inline: true, SkipValidation: bc.skip,
				InputSchema: json.RawMessage(bc.schema),
				Handler: func(c *Call) error {
					t, _ := c.ArgBytes("text")
					c.TextBytes(t)
					return nil
				}}); err != nil {
				b.Fatal(err)
			}
			sc := NewScope(s, "")
			msg := []byte(echoFixture)
			rep := &nopReplier{}
			var env codec.Envelope
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if err := codec.Peek(msg, &env); err != nil {
					b.Fatal(err)
				}
				r := sc.BeginBorrowed(context.Background(), msg, &env, rep, nil)
				if e := r.Check(); e != nil {
					b.Fatal(e.Error())
				}
				r.Run()
			}
			if rep.n == 0 {
				b.Fatal("no reply")
			}
		})
	}
}

// BenchmarkArgCheck is the check alone on the echo arguments: flat, and
// the same schema through the library.
func BenchmarkArgCheck(b *testing.B) {
	a, err := compileArgSchema([]byte(echoSchema))
	if err != nil || a.flat == nil {
		b.Fatal(err, a.flat)
	}
	args := []byte(`{"text":"hello world"}`)
	b.Run("flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if e := a.check(args); e != nil {
				b.Fatal(e.Error())
			}
		}
	})
	b.Run("compiled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if e := a.checkCompiled(args); e != nil {
				b.Fatal(e.Error())
			}
		}
	})
}
