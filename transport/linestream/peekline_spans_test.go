package linestream

import (
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// TestPeekLineSpansKeepNextLine: a handler appends to a raw slice the Call
// hands out. codec.PeekLine fills the envelope from the rest of the read,
// so its spans have room up to the read's end; the Call's accessors must
// hand them out without it (the frame's own capacity ends with its line,
// framing), or the append writes over the next line of the same read,
// which is then misparsed (round 9's review: ArgBytes and Arguments did).
func TestPeekLineSpansKeepNextLine(t *testing.T) {
	for name, raw := range map[string]func(c *engine.Call) []byte{
		"ArgBytes":      func(c *engine.Call) []byte { b, _ := c.ArgBytes("text"); return b },
		"Arguments":     (*engine.Call).Arguments,
		"Params":        (*engine.Call).Params,
		"Meta":          (*engine.Call).Meta,
		"ID":            (*engine.Call).ID,
		"ClientInfo":    (*engine.Call).ClientInfo,
		"ProgressToken": (*engine.Call).ProgressToken,
		"ParamRaw":      func(c *engine.Call) []byte { b, _ := c.ParamRaw("name"); return b },
	} {
		t.Run(name, func(t *testing.T) {
			s := engine.New(engine.Config{})
			defer func() { _ = s.Shutdown(t.Context()) }()
			_ = s.AddTool(engine.Tool{Name: "grow", Inline: true, Handler: func(c *engine.Call) error {
				b := raw(c)
				if len(b) == 0 {
					t.Errorf("%s: empty", name)
				}
				c.TextBytes(append(b, strings.Repeat("!", 400)...)[:1])
				return nil
			}})
			_ = s.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
				b, _ := c.ArgBytes("text")
				c.TextBytes(b)
				return nil
			}})
			// The usual shape, with a progressToken: PeekLine takes it.
			in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grow","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}}}` + "\n" +
				req(2, "tools/call", `"name":"echo","arguments":{"text":"second"}`) + "\n"
			out := feedChunks(s, [][]byte{[]byte(in)})
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 2 || !strings.Contains(lines[1], `"id":2`) || !strings.Contains(lines[1], `"text":"second"`) {
				t.Fatalf("the second line was not answered as sent:\n%s", out)
			}
		})
	}
}
