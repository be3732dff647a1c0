package streamhttp

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestRequestLendsHeaders: on both front ends, a loopback client's request
// on a server without hooks reaches its handler with its headers (lent by
// the exchange, engine.HeadersLender) and is not marked rare: the
// transport sets no empty limit key, no nil ConnInfo and no headers on
// it, so the engine's release has nothing extra to clear. rare is read by
// reflection (the engine's unexported flag on the Call).
func TestRequestLendsHeaders(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		if err := h.eng.AddTool(engine.Tool{Name: "lent", Inline: true, Handler: func(c *engine.Call) error {
			rare := reflect.ValueOf(c).Elem().FieldByName("rare").Bool()
			v, ok := c.HeaderBytes("x-TENANT")
			n := 0
			c.VisitHeaders(func(k, _ []byte) bool {
				if string(k) == "X-Tenant" {
					n++
				}
				return true
			})
			c.Text(fmt.Sprintf("rare=%v %s %v %d %q", rare, v, ok, n, c.Header("X-Absent")))
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		hdr := mcpHdr("tools/call", "Mcp-Name: lent", "X-Tenant: acme")
		for i := range 2 { // the second on a recycled Call and exchange
			_, body := h.do(t, request{hdr: hdr, body: fixture.ToolsCall(fmt.Sprint(i+1), "lent", "{}")})
			if got, want := fixture.ToolText(t, fixture.DecodeMsg(t, body)), `rare=false acme true 1 ""`; got != want {
				t.Errorf("request %d: %q, want %q", i+1, got, want)
			}
		}
	})
}
