package streamhttp

import (
	"bufio"
	"bytes"
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// wireEchoRequest is the echo tools/call parsed from the wire, as the
// server reads it (with its raw header block), plus extra header lines.
func wireEchoRequest(tb testing.TB, extra string) *fasthttp.Request {
	body := fixture.ToolsCall("1", "echo", `{"text":"hi"}`)
	wire := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n" +
		"Mcp-Name: echo\r\nUser-Agent: bench\r\n" + extra + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	req := new(fasthttp.Request)
	if err := req.Read(bufio.NewReader(bytes.NewReader([]byte(wire)))); err != nil {
		tb.Fatal(err)
	}
	return req
}

// BenchmarkDuplicateCheck (F2): the two halves of the fasthttp
// duplicate-header check on the echo request's raw header block: the
// line count every request pays, and the scan paid only when the count
// is inconclusive (merged lines, a request without a Content-Length
// body). Target: the count a few ns, 0 allocs.
func BenchmarkDuplicateCheck(b *testing.B) {
	raw := wireEchoRequest(b, "").Header.RawHeaders()
	b.Run("count", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if rawHeaderLines(raw) != 8 {
				b.Fatal("lines")
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if scanDuplicates(raw) != dupNone {
				b.Fatal("duplicate")
			}
		}
	})
}

// BenchmarkFastEchoParsed: BenchmarkFastEchoInMemory/handler on a request
// parsed from the wire, which the duplicate check reads: "count" settles
// it by counting (also with the Connection: keep-alive line Node's and
// Python's clients send), "scan" (two Cookie lines, which fasthttp
// merges) reads the raw block again.
func BenchmarkFastEchoParsed(b *testing.B) {
	for _, bc := range []struct{ name, extra string }{{"count", ""}, {"count/keepalive", "Connection: keep-alive\r\n"},
		{"scan", "Cookie: a=1\r\nCookie: b=2\r\n"}} {
		b.Run(bc.name, func(b *testing.B) {
			benchHandler(b, func() *fasthttp.Request { return wireEchoRequest(b, bc.extra) })
		})
	}
}
