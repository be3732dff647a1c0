package streamhttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// Mounting the Streamable HTTP endpoint in an existing net/http server.
// NetListener and ConnContext give the adapter what the fasthttp front end
// has on its own: connection limits per IP and in all (429/503) and a 400
// for a request with both Content-Length and Transfer-Encoding. Timeouts
// and the header limit are the http.Server's to set.
func ExampleServer_NetListener() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})
	hs := streamhttp.New(srv, streamhttp.Config{MaxConnsPerIP: 64, MaxConns: 1024})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	h, err := hs.Handler(ln.Addr().String())
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	server := &http.Server{
		Handler:           mux,
		ConnContext:       hs.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	go func() { _ = server.Serve(hs.NetListener(ln)) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
		_ = hs.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()

	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
}
