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

// TestAcceptsBothParts: acceptsBoth's first shortcut, HTTP-03's example
// spelling compared in three parts (16, 16 and 3 bytes), and its switch
// answer as the reading of the list item by item (acceptsList) does, for
// each of those spellings with any one byte changed, cut or added. Fails
// when any of the three compares is dropped or shortened.
func TestAcceptsBothParts(t *testing.T) {
	for _, base := range []string{"application/json, text/event-stream", "text/event-stream, application/json",
		"application/json,text/event-stream", "text/event-stream,application/json"} {
		check := func(v string) {
			if got, want := acceptsBoth([]byte(v)), acceptsList([]byte(v)); got != want {
				t.Errorf("acceptsBoth(%q) = %v, the list reads %v", v, got, want)
			}
		}
		check(base)
		for i := 0; i <= len(base); i++ {
			check(base[:i] + "x" + base[i:])
			if i == len(base) {
				break
			}
			check(base[:i] + base[i+1:])
			for _, c := range []byte{'x', ' ', ',', ';', base[i] ^ 0x20, base[i] + 1} {
				check(base[:i] + string(c) + base[i+1:])
			}
		}
	}
}
