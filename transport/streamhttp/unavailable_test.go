package streamhttp

import (
	"fmt"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/state"
)

// TestUnavailableIs503: a handler whose shared state is unreachable
// (an error wrapping state.ErrUnavailable) is answered -32603 with HTTP
// 503 and Retry-After, counted, on both front ends (E1).
func TestUnavailableIs503(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		if err := h.eng.AddTool(engine.Tool{Name: "needs_store", Handler: func(c *engine.Call) error {
			return fmt.Errorf("lookup: %w", state.ErrUnavailable)
		}}); err != nil {
			t.Fatal(err)
		}
		resp, body := h.do(t, request{hdr: mcpHdr("tools/call", "Mcp-Name: needs_store"), body: fixture.ToolsCall("7", "needs_store", "{}")})
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if m := fixture.DecodeMsg(t, body); m.Error == nil || m.Error.Code != -32603 || !strings.Contains(m.Error.Message, "unavailable") || string(m.ID) != "7" {
			t.Fatalf("body %s", body)
		}
		if h.srv.Stats().Unavailable.Load() != 1 || h.eng.Stats().Unavailable.Load() != 1 {
			t.Fatal("not counted")
		}
	})
}
