package streamhttp

import (
	"bytes"
	"strings"
	"testing"
)

// TestHeaderLoopVersionName: fastHandler files MCP-Protocol-Version by
// two compares of its canonical spelling (16 bytes, then 4) and every
// other spelling through mirrored.add; a name of the same length that
// differs in either part is not the version header (HDR-01, HDR-06;
// HVAL-02 step 7: -32020 for a missing header, B12 for a second one).
// Fails when either compare is dropped or shortened (a 20-byte name
// filed as the version).
func TestHeaderLoopVersionName(t *testing.T) {
	c, br := serveConn(t, typedEchoEngine(t), Config{})
	const line = "MCP-Protocol-Version: 2026-07-28\r\n"
	missing := `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: missing required MCP-Protocol-Version header"}}`
	dup := `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header sent more than once"}}`
	for _, tc := range []struct {
		lines  string // in place of line
		status int
		body   string
	}{
		{line, 200, wrkEchoReply},
		{"mcp-protocol-version: 2026-07-28\r\n", 200, wrkEchoReply},
		{"MCP-PROTOCOL-VERSION: 2026-07-28\r\n", 200, wrkEchoReply},
		{"Mcp-Protocol-Verzion: 2026-07-28\r\n", 400, missing},
		{"Mcp-Protocol-Versiom: 2026-07-28\r\n", 400, missing},
		{"Mcp-Protocol-Vers: 2026-07-28\r\n", 400, missing},
		{"Xcp-Protocol-Version: 2026-07-28\r\n", 400, missing},
		{"Mcp-Protocol-Wersion: 2026-07-28\r\n", 400, missing},
		{"Mcp-Protocol-Versionn: 2026-07-28\r\n", 400, missing},
		{"Mcp-Protocol-Verzion: 2026-07-28\r\n" + line, 200, wrkEchoReply},
		{line + "Xcp-Protocol-Version: 2026-07-28\r\n", 200, wrkEchoReply},
		{line + line, 400, dup},
		{line + "mcp-protocol-version: 2026-07-28\r\n", 400, dup},
	} {
		req := bytes.Replace(wrkRequest, []byte(line), []byte(tc.lines), 1)
		resp, body := connRoundTrip(t, c, br, req)
		if resp.StatusCode != tc.status || string(body) != tc.body {
			t.Errorf("%q: %d %s, want %d %s", strings.TrimSpace(tc.lines), resp.StatusCode, body, tc.status, tc.body)
		}
	}
}
