package streamhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// TestReplyWithAnotherID (RELIABILITY D5): on HTTP, the SSE reply to a
// tools/call carries first a response with an id the client never sent,
// then the call's own response, twice.
// The stray response is dropped and counted (Stats.Unmatched), the call
// gets its own result once, and the second copy is never delivered.
func TestReplyWithAnotherID(t *testing.T) {
	leakCheck(t)
	const discover = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"d5","version":"1"}}}`
	ps := newProbeServer(t, func(w http.ResponseWriter, _ *http.Request, method string, id json.RawMessage) {
		switch method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, discover)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			own := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"own"}]}}`, id)
			fmt.Fprintf(w, "data: %s\n\n", `{"jsonrpc":"2.0","id":987654,"result":{"resultType":"complete","content":[{"type":"text","text":"stray"}]}}`)
			fmt.Fprintf(w, "data: %s\n\ndata: %s\n\n", own, own)
		}
	})
	tr := dtDial(t, ps.srv.URL+"/mcp", Config{})
	c := mcpclient.New(tr, mcpclient.Config{})
	ctx := dtCtx(t)
	for i := range 3 {
		res, err := c.CallTool(ctx, "x", nil, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(res.Content) != 1 || res.Content[0].Text != "own" {
			t.Fatalf("call %d: result %+v, want the call's own", i, res)
		}
	}
	if got := tr.Stats().Unmatched; got != 3 {
		t.Errorf("Stats.Unmatched = %d, want 3 (one stray response per call)", got)
	}
}
