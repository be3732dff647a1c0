package streamhttp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestPeekMemoAcrossRequests: the body's peek keeps a memo of the last
// params._meta in the request's working space (work.memo), which the next
// request taking that work compares byte for byte. Requests on one
// connection that repeat the _meta, change one byte of its
// protocolVersion, change its clientInfo's length, or break the JSON right after
// the remembered bytes are each answered as they would be without it.
func TestPeekMemoAcrossRequests(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		c := h.dial(t)
		meta := func(version, client, tail string) string {
			return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version +
				`","io.modelcontextprotocol/clientInfo":{"name":"` + client + `","version":"1"},` +
				`"io.modelcontextprotocol/clientCapabilities":{}` + tail
		}
		body := func(id int, m string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t%d"},%s}}`, id, id, m)
		}
		steps := []struct {
			body   string
			status int
			text   string // the echo's text; "" for an error
		}{
			{body(1, meta("2026-07-28", "a", `,"progressToken":1}`)), 200, "t1"},
			{body(2, meta("2026-07-28", "a", `,"progressToken":2}`)), 200, "t2"},
			// One byte of protocolVersion differs from the memo's: the body
			// no longer matches the MCP-Protocol-Version header.
			{body(3, meta("2026-07-29", "a", `,"progressToken":3}`)), 400, ""},
			{body(4, meta("2026-07-28", "bbbb", `}`)), 200, "t4"},
			{body(5, meta("2026-07-28", "bbbb", `}`)), 200, "t5"},
			// The remembered bytes, then a member with no value.
			{body(6, meta("2026-07-28", "bbbb", `,"progressToken":}`)), 400, ""},
			// The remembered bytes, then the message ends.
			{strings.TrimSuffix(body(7, meta("2026-07-28", "bbbb", `}`)), "}}}"), 400, ""},
			{body(8, meta("2026-07-28", "bbbb", `,"progressToken":"x"}`)), 200, "t8"},
		}
		for i, s := range steps {
			resp, raw := c.roundTrip(h, request{hdr: mcpHdr("tools/call", "Mcp-Name: echo"), body: s.body})
			if resp.StatusCode != s.status {
				t.Fatalf("step %d: status %d, want %d: %s", i+1, resp.StatusCode, s.status, raw)
			}
			m := fixture.DecodeMsg(t, raw)
			if s.text == "" {
				if m.Error == nil {
					t.Fatalf("step %d: %s, want an error", i+1, raw)
				}
				continue
			}
			if got := fixture.ToolText(t, m); got != s.text {
				t.Fatalf("step %d: text %q, want %q", i+1, got, s.text)
			}
		}
	})
}
