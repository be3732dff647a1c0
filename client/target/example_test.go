package target_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/socket"
)

// A client on any transport from a target string: here a TCP server in
// the same process. "stdio:'./server --stdio'" would spawn one instead,
// and "http://127.0.0.1:8080/mcp" would speak Streamable HTTP.
func ExampleOpen() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgString("text")
		c.Text(text)
		return nil
	}})
	s := socket.New(srv, socket.Config{})
	_ = s.Listen("tcp", "127.0.0.1:0")
	_ = s.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()

	c, err := target.Open("tcp://"+s.Addrs()[0].String(), target.Config{Logger: quiet()})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hello"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Era(), c.ProtocolVersion(), res.Text())
	// Output: modern 2026-07-28 hello
}

// Progress, cancellation and a listen stream with the client API.
func ExampleOpen_listen() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	_ = srv.AddTool(engine.Tool{Name: "work", Handler: func(c *engine.Call) error {
		for i := 1; i <= 3; i++ {
			c.Progress(float64(i), 3, "step")
		}
		c.Text("done")
		return nil
	}})
	s := socket.New(srv, socket.Config{})
	_ = s.Listen("tcp", "127.0.0.1:0")
	_ = s.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()
	c, _ := target.Open("tcp://"+s.Addrs()[0].String(), target.Config{Logger: quiet()})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	sub, err := c.Listen(ctx, client.Filter{ToolsListChanged: true})
	if err != nil {
		panic(err)
	}
	defer sub.Close()
	fmt.Println("first event acknowledged:", (<-sub.Events()).Kind == client.EventAcknowledged)

	var steps int
	res, err := c.CallTool(ctx, "work", nil, &client.CallOptions{
		OnProgress: func(p client.Progress) { steps++ },
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text(), "after progress notifications:", steps > 0)

	_ = srv.AddTool(engine.Tool{Name: "late", Handler: func(c *engine.Call) error { return nil }})
	srv.ToolsChanged()
	e := <-sub.Events()
	fmt.Println(e.Method)
	// Output:
	// first event acknowledged: true
	// done after progress notifications: true
	// notifications/tools/list_changed
}
