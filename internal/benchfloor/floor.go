// Package benchfloor is a yardstick for the HTTP comparison, not a server
// anyone should run: bare fasthttp plus only the steps the 2026-07-28
// Streamable HTTP transport asks of every server before it may answer the
// standard fixture (a tools/call of the echo tool), each done once, the
// cheapest way this project knows. It sits between bench/rawfast's splice
// (no checks at all) and mcpwire (every check, plus an engine).
//
// What the floor does, in the order the spec digest recommends:
//   - Origin refused when present (no allow-list), Host accepted only on
//     loopback names;
//   - POST only; Content-Type application/json; Accept naming both
//     application/json and text/event-stream;
//   - the whole body parsed and checked by codec.PeekWith with a memo, as
//     mcpwire does (malformed JSON and invalid requests refused);
//   - the _meta protocol version claimed, the MCP-Protocol-Version header
//     present and equal to it and to the one version served;
//   - Mcp-Method present and equal to the body's method, which must be
//     tools/call; Mcp-Name present and equal to params.name, which must be
//     echo;
//   - the arguments' text member present and a string (the tool's input
//     schema);
//   - the reply: the request's id and the text, twice, in the same bytes
//     mcpwire's reference server sends.
//
// What it leaves out, and mcpwire does not: a tool registry and typed
// decoding, request lifecycle (in-flight tracking for shutdown and
// cancellation, timeouts), limits, counters, percent-decoded Mcp-Name
// values, error bodies with JSON-RPC codes, SSE, and every other method.
// So a server that reads at the floor's throughput would have to do all of
// those for nothing.
package benchfloor

import (
	"bytes"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/codec"
)

// Version is the one protocol version the floor serves.
const Version = "2026-07-28"

// Handler answers the fixture's tools/call of echo with reply's bytes, the
// id and the text spliced in; reply is a complete answer to a request with
// id 1 whose text is "hello world" (mcpwire's reference reply). Every
// other request gets a status without a body: 403, 421, 405, 415, 406 or
// 400.
func Handler(reply string) fasthttp.RequestHandler {
	const text = "hello world"
	i := len(`{"jsonrpc":"2.0","id":`)
	j := i + len("1")
	t1 := bytes.Index([]byte(reply), []byte(text))
	t2 := t1 + len(text) + bytes.Index([]byte(reply[t1+len(text):]), []byte(text))
	head := []byte(reply[:i])
	mid := []byte(reply[j:t1])
	mid2 := []byte(reply[t1+len(text) : t2])
	tail := []byte(reply[t2+len(text):])
	return func(ctx *fasthttp.RequestCtx) {
		var ctype, accept, version, method, name []byte
		var hasOrigin, hasVersion, hasMethod, hasName bool
		for k, v := range ctx.Request.Header.All() {
			switch string(k) {
			case "Origin":
				hasOrigin = true
			case "Content-Type":
				ctype = v
			case "Accept":
				accept = v
			case "Mcp-Protocol-Version":
				version, hasVersion = v, true
			case "Mcp-Method":
				method, hasMethod = v, true
			case "Mcp-Name":
				name, hasName = v, true
			}
		}
		switch {
		case hasOrigin:
			ctx.SetStatusCode(403)
			return
		case !loopback(ctx.Request.Header.Host()):
			ctx.SetStatusCode(421)
			return
		case !ctx.IsPost():
			ctx.SetStatusCode(405)
			return
		case !bytes.HasPrefix(ctype, []byte("application/json")):
			ctx.SetStatusCode(415)
			return
		case !bytes.Contains(accept, []byte("application/json")) || !bytes.Contains(accept, []byte("text/event-stream")):
			ctx.SetStatusCode(406)
			return
		}
		st := states.Get().(*state)
		defer states.Put(st)
		env := &st.env
		if codec.PeekWith(ctx.PostBody(), env, codec.PeekConfig{Memo: &st.memo}) != nil || env.Kind != codec.KindRequest ||
			!env.ProtocolVersion.Present || !hasVersion ||
			string(version) != string(env.ProtocolVersion.Raw) || string(version) != Version ||
			!hasMethod || string(method) != string(env.Method.Raw) || string(method) != "tools/call" ||
			!hasName || string(name) != string(env.Name.Raw) || string(name) != "echo" {
			ctx.SetStatusCode(400)
			return
		}
		s, ok := env.ArgString("text")
		if !ok {
			ctx.SetStatusCode(400)
			return
		}
		ctx.SetContentType("application/json")
		r := &ctx.Response
		r.AppendBody(head)
		r.AppendBody(env.ID)
		r.AppendBody(mid)
		r.AppendBody(s.Raw) // already escaped as JSON: Peek checked the string
		r.AppendBody(mid2)
		r.AppendBody(s.Raw)
		r.AppendBody(tail)
	}
}

// state is what a request's parse writes: the envelope, and the memo that
// lets the next request of the same shape be read by two compares (as
// mcpwire's exchanges keep one). Pooled: one per request at a time.
type state struct {
	env  codec.Envelope
	memo codec.PeekMemo
}

var states = sync.Pool{New: func() any { return new(state) }}

// loopback reports whether a Host value names a loopback address, with or
// without a port.
func loopback(h []byte) bool {
	for _, p := range [...]string{"127.0.0.1", "localhost", "[::1]"} {
		if bytes.HasPrefix(h, []byte(p)) && (len(h) == len(p) || h[len(p)] == ':') {
			return true
		}
	}
	return false
}
