// Command rawfast is the baseline of the HTTP comparison: a bare fasthttp
// server that answers every POST with a fixed tools/call echo reply of the
// same size as mcpwire's, doing no parsing, validation or dispatch. The
// ratio mcpwire/rawfast is what the transport costs.
//
// With -splice-id (what bench/compare.sh uses, because `mcpwire load` checks
// that each reply carries its request's id) the reply's id is the request's
// id token, found with one byte search for `"id":` — still no JSON parsing;
// the reply then has exactly the size of mcpwire's reply to the same request.
//
// With -floor it is the floor instead (internal/benchfloor): the checks
// every 2026-07-28 server must make before it answers the fixture, the
// body parsed by mcpwire's codec, and the reply built from the request —
// the least a conforming server can do, for comparison with both.
//
// With -tls-cert and -tls-key it is the HTTPS ceiling: the same server
// behind fasthttp's own ListenAndServeTLS with that certificate.
//
// SIGUSR1 writes a stats line to stderr (see bench/internal/procstats).
package main

import (
	"bytes"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/bench/internal/procstats"
	"github.com/mcpwire/mcpwire/internal/benchfloor"
)

const reply = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","title":"mcpwire reference server","version":"devel"}}}}`

var (
	idKey     = []byte(`"id":`)
	replyHead = []byte(reply[:len(`{"jsonrpc":"2.0","id":`)])
	replyTail = []byte(reply[len(`{"jsonrpc":"2.0","id":1`):])
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	splice := flag.Bool("splice-id", false, "copy each request's id into its reply (no parsing: first \"id\": token)")
	floor := flag.Bool("floor", false, "the floor instead: the checks every 2026-07-28 server makes before it answers, the body parsed by mcpwire's codec, the reply built from the request (internal/benchfloor)")
	certFile := flag.String("tls-cert", "", "serve HTTPS with this PEM certificate chain (fasthttp's ListenAndServeTLS; needs -tls-key)")
	keyFile := flag.String("tls-key", "", "the PEM private key of -tls-cert")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file until the server stops (SIGTERM/SIGINT)")
	flag.Parse()
	procstats.OnSignal() // SIGUSR1: a stats line on stderr, like every comparison server
	if *cpuProfile != "" {
		stopProfile := procstats.StartCPUProfile(*cpuProfile)
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-ch
			stopProfile()
			os.Exit(0)
		}()
	}
	body := []byte(reply)
	s := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			if *splice {
				if id := idToken(ctx.PostBody()); id != nil {
					ctx.Response.AppendBody(replyHead)
					ctx.Response.AppendBody(id)
					ctx.Response.AppendBody(replyTail)
					return
				}
			}
			ctx.SetBody(body)
		},
		NoDefaultServerHeader: true,
	}
	if *floor {
		s.Handler = benchfloor.Handler(reply)
	}
	if *certFile != "" || *keyFile != "" {
		log.Fatal(s.ListenAndServeTLS(*addr, *certFile, *keyFile))
	}
	log.Fatal(s.ListenAndServe(*addr))
}

// idToken is the bytes after the first `"id":` up to the next ',' or '}'.
func idToken(b []byte) []byte {
	i := bytes.Index(b, idKey)
	if i < 0 {
		return nil
	}
	tok := b[i+len(idKey):]
	end := bytes.IndexAny(tok, ",}")
	if end < 0 {
		return nil
	}
	return tok[:end]
}
