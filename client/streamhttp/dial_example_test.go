package streamhttp_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/engine"
	httpserver "github.com/mcpwire/mcpwire/transport/streamhttp"
)

// Calling a tool over Streamable HTTP: Dial gives the transport, a
// client.Client runs the calls over it (era probe, _meta, retries).
func ExampleDial() {
	// A server to call.
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})
	hs := httpserver.New(srv, httpserver.Config{})
	ln, err := hs.Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()

	t, err := streamhttp.Dial("http://"+ln.Addr().String()+"/mcp", streamhttp.Config{})
	if err != nil {
		panic(err)
	}
	c := client.New(t, client.Config{})
	defer c.Close()
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Era(), res.Text())
	// Output:
	// modern hi
}
