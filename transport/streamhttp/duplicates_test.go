package streamhttp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestDuplicateHeaders (F2, B6, B12): a request carrying two lines of a
// once-only header is refused with 400 and the same JSON-RPC error on
// both front ends, on the MCP endpoint and on a mount, whatever the lines
// hold and in whichever order or case they come: never "first wins" on
// one and "last wins" on the other. Each refusal is counted once in
// Stats.DuplicateHeaders.
func TestDuplicateHeaders(t *testing.T) {
	own := "Origin: http://127.0.0.1:{port}"
	cases := []struct {
		name  string
		field string // the field named in the answer
		lines []string
	}{
		{"origin_evil_first", "Origin", []string{"Origin: http://evil.example", own}},
		{"origin_evil_last", "Origin", []string{own, "Origin: http://evil.example"}},
		{"origin_same_twice", "Origin", []string{own, own}},
		{"origin_case_variant", "Origin", []string{"origin: http://evil.example", own}},
		{"authorization", "Authorization", []string{"Authorization: Bearer a", "Authorization: Bearer b"}},
		{"authorization_case_variant", "Authorization", []string{"AUTHORIZATION: Bearer a", "authorization: Bearer b"}},
		{"content_type", "Content-Type", []string{"Content-Type: text/plain"}}, // baseHdr has one already
		{"content_type_case_variant", "Content-Type", []string{"content-type: application/json"}},
	}
	mounts := map[string]http.Handler{"/other": mountHandler(nil)}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{Mounts: mounts}, defaultOptions())
		for _, path := range []string{"/mcp", "/other"} {
			for _, tc := range cases {
				t.Run(strings.TrimPrefix(path, "/")+"/"+tc.name, func(t *testing.T) {
					before := h.srv.Stats().DuplicateHeaders.Load()
					resp, body := h.do(t, request{path: path, hdr: append(append([]string{}, echoHdr...), tc.lines...), body: fixture.ToolsCall("1", "echo", `{"text":"hi"}`)})
					checkDuplicateAnswer(t, resp, body, tc.field)
					if got := h.srv.Stats().DuplicateHeaders.Load() - before; got != 1 {
						t.Errorf("DuplicateHeaders went up by %d, want 1", got)
					}
				})
			}
		}
		// The same requests with one line each are served (the check is on
		// the count, not on the names).
		if resp, _ := h.do(t, request{hdr: append(append([]string{}, echoHdr...), own, "Authorization: Bearer a"), body: fixture.ToolsCall("1", "echo", `{"text":"hi"}`)}); resp.StatusCode != 200 {
			t.Errorf("one Origin and one Authorization: %d, want 200", resp.StatusCode)
		}
		// Two Host lines: each HTTP server refuses them before the handler
		// runs; fasthttp's refusal gets the package's answer and counter.
		before := h.srv.Stats().DuplicateHeaders.Load()
		resp, body := h.do(t, request{hdr: append(append([]string{}, echoHdr...), "Host: evil.example"), body: fixture.ToolsCall("1", "echo", `{"text":"hi"}`)})
		if resp.StatusCode != 400 {
			t.Fatalf("two Host lines: %d, want 400", resp.StatusCode)
		}
		if fe == fastFE {
			checkDuplicateAnswer(t, resp, body, "Host")
			if got := h.srv.Stats().DuplicateHeaders.Load() - before; got != 1 {
				t.Errorf("two Host lines: DuplicateHeaders went up by %d, want 1", got)
			}
		}
		// A mirrored MCP header twice keeps its -32020 with the id (B12),
		// and is counted as a duplicate too.
		before = h.srv.Stats().DuplicateHeaders.Load()
		resp, body = h.do(t, request{hdr: append(append([]string{}, echoHdr...), "Mcp-Method: tools/call"), body: fixture.ToolsCall("7", "echo", `{"text":"hi"}`)})
		if m := fixture.DecodeMsg(t, body); resp.StatusCode != 400 || m.Error == nil || m.Error.Code != -32020 || string(m.ID) != "7" {
			t.Errorf("two Mcp-Method lines: %d %s", resp.StatusCode, body)
		}
		if got := h.srv.Stats().DuplicateHeaders.Load() - before; got != 1 {
			t.Errorf("two Mcp-Method lines: DuplicateHeaders went up by %d, want 1", got)
		}
	})
}

// checkDuplicateAnswer: 400, application/json, a -32600 error without id
// naming the field.
func checkDuplicateAnswer(t *testing.T, resp *http.Response, body []byte, field string) {
	t.Helper()
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != ctJSON {
		t.Fatalf("status %d, Content-Type %q, want 400 %s (body %s)", resp.StatusCode, resp.Header.Get("Content-Type"), ctJSON, body)
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.ID != nil || m.Error.Code != -32600 || m.Error.Message != dupMessage(field) {
		t.Fatalf("body %s (%v), want -32600 %q and no id", body, err, dupMessage(field))
	}
}

// TestScanDuplicates: the raw-block scan behind the fasthttp check.
func TestScanDuplicates(t *testing.T) {
	for i, tc := range []struct {
		raw  string
		want dupHeader
	}{
		{"Host: a\r\nOrigin: x\r\n\r\n", dupNone},
		{"Host: a\r\nOrigin: x\r\norigin: y\r\n\r\n", dupOrigin},
		{"Content-Type: a\r\nX: b\r\nCONTENT-TYPE: c\r\n\r\n", dupContentType},
		{"Authorization: a\r\nAuthorization: a\r\n\r\n", dupAuthorization},
		{"X-A: a\r\n Origin: folded\r\nOrigin: x\r\n\r\n", dupNone}, // a continuation names nothing
		{"Origin : x\r\nOrigin: y\r\n\r\n", dupNone},                // "Origin " is another name (fasthttp refuses it)
		{"Host: a\nHost: b\n\n", dupHost},
		{"", dupNone},
	} {
		if got := scanDuplicates([]byte(tc.raw)); got != tc.want {
			t.Errorf("%d: scanDuplicates(%q) = %v, want %v", i, tc.raw, got, tc.want)
		}
	}
}
