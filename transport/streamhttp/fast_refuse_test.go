package streamhttp

import (
	"bufio"
	"log/slog"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/internal/replayconn"
)

// TestFastRefuse: fastHandler's out-of-line refusals. A request that
// came with a Content-Length line fasthttp dropped (chunked next to it,
// B5) is answered 400, counted and closed; a chunked request without one
// is left alone (false, nothing answered, x still held); a duplicate
// header is answered 400 with its body. Fails if fastRefuse refuses the
// first without looking at the raw block, or lets either refusal through.
func TestFastRefuse(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	read := func(head string) *fasthttp.RequestCtx {
		ctx := new(fasthttp.RequestCtx)
		ctx.Init2(replayconn.New(nil, 0), fastLogger{slog.Default()}, true) // send sets a write deadline on the connection
		if err := ctx.Request.Header.Read(bufio.NewReader(strings.NewReader(head))); err != nil {
			t.Fatal(err)
		}
		return ctx
	}

	ctx := read("POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
	x := s.acquireExchange()
	if s.fastRefuse(ctx, x, dupNone) || ctx.Response.StatusCode() != 200 || x.pooled || s.stats.BadFraming.Load() != 0 {
		t.Fatalf("chunked alone: refused, status %d, pooled %v, BadFraming %d", ctx.Response.StatusCode(), x.pooled, s.stats.BadFraming.Load())
	}
	x.unref()

	ctx = read("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n")
	x = s.acquireExchange()
	if !s.fastRefuse(ctx, x, dupNone) || ctx.Response.StatusCode() != 400 || !ctx.Response.ConnectionClose() || !x.pooled || s.stats.BadFraming.Load() != 1 {
		t.Fatalf("Content-Length and chunked: status %d, close %v, pooled %v, BadFraming %d; want refused 400, closed, released, 1",
			ctx.Response.StatusCode(), ctx.Response.ConnectionClose(), x.pooled, s.stats.BadFraming.Load())
	}

	ctx = read("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n")
	x = s.acquireExchange()
	if !s.fastRefuse(ctx, x, dupOrigin) || ctx.Response.StatusCode() != 400 || string(ctx.Response.Body()) != string(dupBodies[dupOrigin]) ||
		!x.pooled || s.stats.DuplicateHeaders.Load() != 1 {
		t.Fatalf("duplicate Origin: status %d, body %q, pooled %v, DuplicateHeaders %d", ctx.Response.StatusCode(), ctx.Response.Body(), x.pooled, s.stats.DuplicateHeaders.Load())
	}
}
