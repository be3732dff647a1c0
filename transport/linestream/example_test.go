package linestream_test

import (
	"context"
	"fmt"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// A MemConn drives the engine without a socket or a process: tests of
// handlers, and in-process clients.
func ExampleMemConn() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})
	got := make(chan string, 1)
	conn := linestream.NewMem(engine.NewScope(srv, ""), func(frame []byte) error {
		got <- string(frame) // copy: the frame is only valid during the call
		return nil
	}, linestream.Config{}, nil)
	defer conn.Close()

	_ = conn.Send([]byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"in memory"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	fmt.Println(<-got)
	// Output:
	// {"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","content":[{"type":"text","text":"in memory"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
}
