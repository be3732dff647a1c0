package refserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// echoFixture is the standard fixture (tools/call echo {"text":"hello
// world"} with what real clients put in _meta), as make compare sends it.
const echoFixture = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`

// untypedEcho registers echo as it was before the typed API: the
// hand-written schema, ArgBytes and TextBytes (no decode, no encode).
func untypedEcho(tb testing.TB) *engine.Server {
	s := engine.New(engine.Config{Name: ServerName, Title: "mcpwire reference server"})
	if err := s.AddTool(engine.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Inline:      true,
		Handler: func(c *engine.Call) error {
			b, _ := c.ArgBytes("text")
			c.TextBytes(b)
			return nil
		},
	}); err != nil {
		tb.Fatal(err)
	}
	return s
}

// typedEcho is the reference server's echo: engine.AddTool[EchoArgs,
// EchoResult].
func typedEcho(tb testing.TB) *engine.Server {
	s, err := New(Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// nopReplier drops every frame, counting replies.
type nopReplier struct{ n int }

func (*nopReplier) Notify(*engine.Request, []byte) error       { return nil }
func (r *nopReplier) Reply(*engine.Request, []byte, int) error { r.n++; return nil }
func (*nopReplier) Done(*engine.Request)                       {}

// BenchmarkEcho is one echo tools/call through Begin, Check and Run, on
// the transport's goroutine (echo is Inline), with no transport around
// it: untyped is echo before issue 19 (flat check, ArgBytes, TextBytes),
// typed the reference server's echo now (flat check of the closed
// schema, decode into EchoArgs, encode EchoResult once as
// structuredContent and its text). The difference is what the typed API
// costs per call (profiles/typed-tools.benchstat.txt).
func BenchmarkEcho(b *testing.B) {
	for _, bc := range []struct {
		name string
		srv  func(testing.TB) *engine.Server
	}{{"api=untyped", untypedEcho}, {"api=typed", typedEcho}} {
		b.Run(bc.name, func(b *testing.B) {
			s := bc.srv(b)
			defer func() { _ = s.Shutdown(context.Background()) }()
			sc := engine.NewScope(s, "")
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
					b.Fatal(e.Message)
				}
				r.Run()
			}
			if rep.n == 0 {
				b.Fatal("no reply")
			}
		})
	}
}

// BenchmarkEchoParts measures the two costs the typed call adds, alone:
// decoding the arguments into EchoArgs and encoding an EchoResult.
func BenchmarkEchoParts(b *testing.B) {
	args := []byte(`{"text":"hello world"}`)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in EchoArgs
			if err := codec.Unmarshal(args, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		var buf []byte
		out := EchoResult{Text: "hello world"}
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = codec.AppendMarshal(buf[:0], out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
