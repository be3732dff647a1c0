package streamhttp

import (
	"bytes"
	"strconv"
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

// TestCheckShortcuts: check passes HVAL-02 steps 9 and 11 without a call
// when the body's string has no escapes and equals its header (Mcp-Method
// sent once); everything else goes to checkVersionEqual and checkMethod.
// A body string with escapes whose raw bytes equal the header must still
// be refused (its value differs: HDR-01, HDR-03), one whose value equals
// the header accepted, and a second or missing Mcp-Method refused as
// before (B12, HVAL-01). Fails when the shortcut skips the escape, the
// presence or the count test, or compares lengths only; and when
// checkParams' inlined case passes a tool without bindings over too many
// Mcp-Param-* headers (step 14).
func TestCheckShortcuts(t *testing.T) {
	c, br := serveConn(t, typedEchoEngine(t), Config{})
	const verLine, methodLine = "MCP-Protocol-Version: 2026-07-28\r\n", "Mcp-Method: tools/call\r\n"
	req := func(body, verHdr, methodHdrs string) []byte {
		head := string(wrkRequest[:bytes.Index(wrkRequest, []byte("\r\n\r\n"))+2])
		head = strings.Replace(head, verLine, verHdr, 1)
		head = strings.Replace(head, methodLine, methodHdrs, 1)
		head = strings.Replace(head, "Content-Length: "+strconv.Itoa(len(wrkFixtureBody)), "Content-Length: "+strconv.Itoa(len(body)), 1)
		return []byte(head + "\r\n" + body)
	}
	escVer := strings.Replace(wrkFixtureBody, `"2026-07-28"`, `"2026\u002d07-28"`, 1)
	escMethod := strings.Replace(wrkFixtureBody, `"method":"tools/call"`, `"method":"tools\/call"`, 1)
	errBody := func(msg string) string {
		return `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: ` + msg + `"}}`
	}
	for i, tc := range []struct {
		req    []byte
		status int
		body   string
	}{
		{req(wrkFixtureBody, verLine, methodLine), 200, wrkEchoReply},
		{req(escVer, verLine, methodLine), 200, wrkEchoReply},
		{req(escVer, "MCP-Protocol-Version: 2026\\u002d07-28\r\n", methodLine), 400,
			errBody(`MCP-Protocol-Version header value '2026\\u002d07-28' does not match body value '2026-07-28'`)},
		{req(wrkFixtureBody, "MCP-Protocol-Version: 2026-07-29\r\n", methodLine), 400,
			errBody(`MCP-Protocol-Version header value '2026-07-29' does not match body value '2026-07-28'`)},
		{req(escMethod, verLine, methodLine), 200, wrkEchoReply},
		{req(escMethod, verLine, "Mcp-Method: tools\\/call\r\n"), 400,
			errBody(`Mcp-Method header value 'tools\\/call' does not match body value 'tools/call'`)},
		{req(wrkFixtureBody, verLine, methodLine+methodLine), 400, errBody("Mcp-Method header sent more than once")},
		{req(wrkFixtureBody, verLine, ""), 400, errBody("missing required Mcp-Method header")},
		{req(wrkFixtureBody, verLine, "Mcp-Method: tools/cal\r\n"), 400,
			errBody(`Mcp-Method header value 'tools/cal' does not match body value 'tools/call'`)},
		{req(wrkFixtureBody, verLine, "Mcp-Method: tools/calL\r\n"), 400,
			errBody(`Mcp-Method header value 'tools/calL' does not match body value 'tools/call'`)},
		{req(wrkFixtureBody, "MCP-Protocol-Version: 2026-07-2x\r\n", methodLine), 400,
			errBody(`MCP-Protocol-Version header value '2026-07-2x' does not match body value '2026-07-28'`)},
		// Step 14 for a tool without bindings: more Mcp-Param-* headers
		// than are looked at is still refused (checkParams' inlined case).
		{req(wrkFixtureBody, verLine, methodLine+strings.Repeat("Mcp-Param-X: 1\r\n", maxParamHeaders+1)), 400,
			errBody("too many Mcp-Param-* headers")},
		{req(wrkFixtureBody, verLine, methodLine+strings.Repeat("Mcp-Param-X: 1\r\n", maxParamHeaders)), 200, wrkEchoReply},
	} {
		resp, body := connRoundTrip(t, c, br, tc.req)
		if resp.StatusCode != tc.status || string(body) != tc.body {
			t.Errorf("case %d: %d %s, want %d %s", i, resp.StatusCode, body, tc.status, tc.body)
		}
	}
}
