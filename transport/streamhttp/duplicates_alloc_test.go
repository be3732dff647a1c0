//go:build !race

package streamhttp

import (
	"bufio"
	"bytes"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestDuplicateCheckAllocs (F2): the duplicate-header check adds no
// allocation on the fasthttp front end, whether the field count settles
// it or the raw header block is read again (two Cookie lines, which
// fasthttp merges, make the count inconclusive), for a request parsed
// from the wire as the server reads it.
func TestDuplicateCheckAllocs(t *testing.T) {
	body := fixture.ToolsCall("1", "echo", `{"text":"hi"}`)
	for _, extra := range []string{"", "Connection: keep-alive\r\n", "Cookie: a=1\r\nCookie: b=2\r\n"} {
		wire := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n" +
			"Mcp-Name: echo\r\n" + extra + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(bytes.NewReader([]byte(wire)))); err != nil {
			t.Fatal(err)
		}
		if len(req.Header.RawHeaders()) == 0 {
			t.Fatal("no raw header block")
		}
		s := New(benchEngine(t), Config{})
		if err := s.bindAddr(benchAddr); err != nil {
			t.Fatal(err)
		}
		call, _ := handlerCall(t, s, &req)
		parsed := testing.AllocsPerRun(200, call)

		built := echoRequest()
		call, _ = handlerCall(t, s, built)
		base := testing.AllocsPerRun(200, call)
		fasthttp.ReleaseRequest(built)
		if parsed > base {
			t.Errorf("extra %q: %.2f allocations per request parsed from the wire, %.2f for one built in memory", extra, parsed, base)
		}
	}
}
