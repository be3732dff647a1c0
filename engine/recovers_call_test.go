package engine

import (
	"context"
	"strings"
	"testing"
)

// TestRecoversToolCall: a batch that recovers (SetRecovers) runs a
// tools/call through runInline's written-out callTool. A typed tool's
// recorded arguments go to its handler with their count; arguments Peek
// did not record (five members, past maxArgMembers: the inferred schema
// refuses the four it does not name) and arguments that are not an object
// go through callTool's checks; an untyped tool goes to its Handler.
func TestRecoversToolCall(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	type in struct {
		Text string `json:"text"`
	}
	type out struct {
		Text string `json:"text"`
	}
	if err := AddTool(s, Tool{Name: "echo", Inline: true}, func(c *Call, a in) (out, error) {
		return out{Text: "got " + a.Text}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = s.AddTool(Tool{Name: "plain", Inline: true, Handler: func(c *Call) error { c.Text("plain"); return nil }})
	sc := NewScope(s, "tcp")
	rep := &keepReply{}
	b := sc.StartBatch()
	b.SetRecovers()
	msg := func(id, tool, args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	}
	for _, m := range [][]byte{
		msg("1", "echo", `{"text":"hi"}`),
		msg("2", "echo", `{"text":"five","a":1,"b":2,"c":3,"d":4}`),
		msg("3", "echo", `{"text":5,"a":1,"b":2,"c":3,"d":4}`),
		msg("4", "echo", `[1]`),
		msg("5", "plain", `{}`),
		msg("6", "echo", `{"text":7}`),
	} {
		startInBatch(t, sc, b, m, rep)
	}
	b.End()
	got := rep.all()
	want := []string{
		`"id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"text\":\"got hi\"}"}],"structuredContent":{"text":"got hi"},"isError":false,`,
		`"id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"Invalid arguments: arguments.a: not allowed\narguments.b: not allowed\narguments.c: not allowed\narguments.d: not allowed"}],"isError":true,`,
		`"id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"Invalid arguments: arguments.a: not allowed\narguments.b: not allowed\narguments.c: not allowed\narguments.d: not allowed\narguments.text: expected string, got number"}],"isError":true,`,
		`"id":4,"error":{"code":-32602,"message":"Invalid params: arguments must be a JSON object"}`,
		`"id":5,"result":{"resultType":"complete","content":[{"type":"text","text":"plain"}],"isError":false,`,
		`"id":6,"result":{"resultType":"complete","content":[{"type":"text","text":"Invalid arguments: arguments.text: expected string, got number"}],"isError":true,`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("answer %d: %s\nwant it to hold %s", i+1, got[i], w)
		}
	}
	if n := s.Stats().InvalidArguments.Load(); n != 4 {
		t.Errorf("InvalidArguments %d, want 4", n)
	}
}
