package benchfloor

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

const testReply = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false}}`

const fixtureBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`

func request(body string, edit func(h *fasthttp.RequestHeader)) *fasthttp.RequestCtx {
	ctx := new(fasthttp.RequestCtx)
	h := &ctx.Request.Header
	h.SetMethod("POST")
	h.SetHost("127.0.0.1:18080")
	h.SetContentType("application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", Version)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", "echo")
	if edit != nil {
		edit(h)
	}
	ctx.Request.SetBodyString(body)
	return ctx
}

// The floor answers the fixture with the reference reply's bytes, its id
// and text taken from the request (an escaped text stays escaped).
func TestFloorReply(t *testing.T) {
	h := Handler(testReply)
	ctx := request(fixtureBody, nil)
	h(ctx)
	if got := string(ctx.Response.Body()); got != testReply || ctx.Response.StatusCode() != 200 {
		t.Fatalf("status %d body %s", ctx.Response.StatusCode(), got)
	}
	body := strings.Replace(fixtureBody, `"id":1`, `"id":"a7"`, 1)
	body = strings.Replace(body, `"text":"hello world"`, `"text":"x\"y"`, 1)
	ctx = request(body, nil)
	h(ctx)
	want := strings.Replace(testReply, `"id":1`, `"id":"a7"`, 1)
	want = strings.ReplaceAll(want, `hello world`, `x\"y`)
	if got := string(ctx.Response.Body()); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}

// Each check the floor claims refuses what it should: a floor that skipped
// one would not measure what its doc says.
func TestFloorRefuses(t *testing.T) {
	h := Handler(testReply)
	cases := []struct {
		name string
		body string
		edit func(h *fasthttp.RequestHeader)
		code int
	}{
		{"origin", fixtureBody, func(h *fasthttp.RequestHeader) { h.Set("Origin", "http://127.0.0.1") }, 403},
		{"host", fixtureBody, func(h *fasthttp.RequestHeader) { h.SetHost("example.com") }, 421},
		{"get", fixtureBody, func(h *fasthttp.RequestHeader) { h.SetMethod("GET") }, 405},
		{"content-type", fixtureBody, func(h *fasthttp.RequestHeader) { h.SetContentType("text/plain") }, 415},
		{"accept", fixtureBody, func(h *fasthttp.RequestHeader) { h.Set("Accept", "application/json") }, 406},
		{"bad json", fixtureBody[:len(fixtureBody)-1], nil, 400},
		{"no version header", fixtureBody, func(h *fasthttp.RequestHeader) { h.Del("MCP-Protocol-Version") }, 400},
		{"version differs", fixtureBody, func(h *fasthttp.RequestHeader) { h.Set("MCP-Protocol-Version", "2025-11-25") }, 400},
		{"no body version", strings.Replace(fixtureBody, `"io.modelcontextprotocol/protocolVersion":"2026-07-28",`, "", 1), nil, 400},
		{"method differs", fixtureBody, func(h *fasthttp.RequestHeader) { h.Set("Mcp-Method", "tools/list") }, 400},
		{"name differs", fixtureBody, func(h *fasthttp.RequestHeader) { h.Set("Mcp-Name", "echo2") }, 400},
		{"no name header", fixtureBody, func(h *fasthttp.RequestHeader) { h.Del("Mcp-Name") }, 400},
		{"other tool", strings.Replace(fixtureBody, `"name":"echo"`, `"name":"add"`, 1), func(h *fasthttp.RequestHeader) { h.Set("Mcp-Name", "add") }, 400},
		{"text not a string", strings.Replace(fixtureBody, `"text":"hello world"`, `"text":5`, 1), nil, 400},
	}
	for _, c := range cases {
		ctx := request(c.body, c.edit)
		h(ctx)
		if got := ctx.Response.StatusCode(); got != c.code || len(ctx.Response.Body()) != 0 {
			t.Errorf("%s: status %d body %q, want %d and none", c.name, got, ctx.Response.Body(), c.code)
		}
	}
}

// The floor allocates nothing a request (its parse state is pooled). Run
// by make test's plain pass: under the race detector sync.Pool drops
// items on purpose, so the count says nothing there.
func TestFloorAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	h := Handler(testReply)
	ctx := request(fixtureBody, nil)
	if n := testing.AllocsPerRun(100, func() { ctx.Response.Reset(); h(ctx) }); n != 0 {
		t.Fatalf("%v allocations a request", n)
	}
}
