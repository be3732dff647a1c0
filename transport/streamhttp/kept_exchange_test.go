package streamhttp

import (
	"bufio"
	"bytes"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/internal/replayconn"
)

// TestConnKeepsExchange: on one of our connections (limitConn), the
// exchange of a request answered where it was read stays with the
// connection, reset, and serves the connection's next request; a request
// refused before it is served gives it to the pool; a holder that is not
// the last one leaves nothing on the connection. Fails if fastHandler
// does not leave the exchange with the connection (or does not take it
// back), if it takes it without clearing the connection's hold (a
// refused request would then leave a pooled exchange on the connection
// as well), or if unrefTo keeps an exchange another holder still has.
func TestConnKeepsExchange(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	lc := &limitConn{Conn: replayconn.New(nil, 0), clk: &coarseClock{}, stats: &s.stats}
	serve := func(req []byte) *fasthttp.RequestCtx {
		t.Helper()
		ctx := new(fasthttp.RequestCtx)
		ctx.Init2(lc, fastLogger{slog.Default()}, true)
		if err := ctx.Request.Read(bufio.NewReader(bytes.NewReader(req))); err != nil {
			t.Fatal(err)
		}
		s.fastHandler(ctx)
		return ctx
	}

	ctx := serve(wrkRequest)
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Body()) != string(wrkEchoReply) {
		t.Fatalf("first: status %d, body %q", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	x := lc.kept
	if x == nil {
		t.Fatal("first: no exchange kept on the connection")
	}
	checkClean(t, "kept", x)

	ctx = serve(wrkRequest)
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Body()) != string(wrkEchoReply) {
		t.Fatalf("second: status %d, body %q", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if lc.kept != x {
		t.Fatalf("second: kept %p, want the first request's %p", lc.kept, x)
	}
	checkClean(t, "kept again", x)

	// A duplicate Origin is refused in fastHandler (fastRefuse): its
	// exchange goes to the pool, and the connection holds none.
	dup := bytes.Replace(wrkRequest, []byte("Host:"), []byte("Origin: http://a\r\nOrigin: http://b\r\nHost:"), 1)
	if ctx = serve(dup); ctx.Response.StatusCode() != 400 {
		t.Fatalf("duplicate Origin: status %d", ctx.Response.StatusCode())
	}
	if lc.kept != nil {
		t.Fatalf("refused: the connection still holds %p", lc.kept)
	}
	if !x.pooled {
		t.Fatal("refused: the exchange was not released")
	}

	// Another holder (a worker, a stream) still has it: nothing is left
	// on the connection; the last holder gives it to the pool.
	y := s.acquireExchange()
	y.refs.Add(1)
	y.unrefTo(lc)
	if lc.kept != nil || y.pooled {
		t.Fatalf("not the last holder: kept %p, pooled %v", lc.kept, y.pooled)
	}
	y.unref()
	if lc.kept != nil || !y.pooled {
		t.Fatalf("last holder: kept %p, pooled %v", lc.kept, y.pooled)
	}
}
