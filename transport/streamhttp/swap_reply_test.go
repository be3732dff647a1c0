package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// echoRequestOf is wrkRequest with text echoed instead of "hello world".
func echoRequestOf(text string) []byte {
	return bytes.Replace(wrkRequest, []byte(`"text":"hello world"`), []byte(`"text":"`+text+`"`), 1)
}

// TestReplySwapsBody: a reply in place takes the engine's frame as the
// response body without a copy (SwapBody, SwapReply), so the engine must
// write its next response elsewhere. Three requests are served in turn on
// three RequestCtx, none of them sent yet (fasthttp writes a response
// after its handler returns, while the Call is already back in the pool
// and serving the next request), with texts of the same length: each body
// must still be its own reply once all have run. It fails when the engine
// keeps writing in the array it gave away (SwapReply not called, or not
// replacing the Call's buffer): the later requests overwrite the earlier
// bodies.
func TestReplySwapsBody(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	texts := []string{"hello world", "other texts", "third reply"}
	ctxs := make([]*fasthttp.RequestCtx, len(texts))
	for round := range 3 {
		for i, text := range texts {
			ctx := ctxs[i]
			if ctx == nil {
				ctx = new(fasthttp.RequestCtx)
				ctx.Init2(nopConn{}, nil, true)
				ctxs[i] = ctx
			}
			ctx.Request.Reset()
			ctx.Response.Reset()
			if err := ctx.Request.Read(bufio.NewReader(bytes.NewReader(echoRequestOf(text)))); err != nil {
				t.Fatal(err)
			}
			s.fastHandler(ctx)
		}
		for i, text := range texts {
			want := strings.ReplaceAll(wrkEchoReply, "hello world", text)
			if got := string(ctxs[i].Response.Body()); got != want || ctxs[i].Response.StatusCode() != 200 {
				t.Fatalf("round %d, request %d: %d %q, want %q", round, i, ctxs[i].Response.StatusCode(), got, want)
			}
		}
	}
}

// TestReplyForeignFrameCopied: a frame that is not the engine's own
// response buffer (SwapReply refuses it) is copied into the body, as
// before: changing it after Reply leaves the body as it was. It fails
// when Reply keeps such a frame as the body.
func TestReplyForeignFrameCopied(t *testing.T) {
	x, c, ctx := quietExchange(t)
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if err := x.Reply(c, frame, 200); err != nil {
		t.Fatal(err)
	}
	copy(frame, "XXXXXXXX")
	if got := string(ctx.Response.Body()); !x.inPlace || got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("inPlace %v, body %q", x.inPlace, got)
	}
}

// quietExchange is an exchange of a fasthttp front end whose Reply goes in
// place (quiet), with a begun request of the standard fixture for its
// Reply to name, and the RequestCtx the reply lands in.
func quietExchange(t *testing.T) (*exchange, *engine.Request, *fasthttp.RequestCtx) {
	t.Helper()
	eng := typedEchoEngine(t)
	x := New(eng, Config{}).acquireExchange()
	var env codec.Envelope
	if err := codec.Peek([]byte(wrkFixtureBody), &env); err != nil {
		t.Fatal(err)
	}
	c := engine.NewScope(eng, "").Begin(context.Background(), []byte(wrkFixtureBody), &env, x, nil)
	ctx := new(fasthttp.RequestCtx)
	x.fw = fastWriter{ctx: ctx}
	x.quiet = true
	return x, c, ctx
}
