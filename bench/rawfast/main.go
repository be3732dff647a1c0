// Command rawfast is the baseline of the HTTP comparison: a bare fasthttp
// server that answers every POST with a fixed tools/call echo reply of the
// same size as mcpwire's, doing no parsing, validation or dispatch. The
// ratio mcpwire/rawfast is what the transport costs.
package main

import (
	"flag"
	"log"

	"github.com/valyala/fasthttp"
)

const reply = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","title":"mcpwire reference server","version":"devel"}}}}`

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	flag.Parse()
	body := []byte(reply)
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(body)
		},
		NoDefaultServerHeader: true,
	}
	log.Fatal(s.ListenAndServe(*addr))
}
