package stdio_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mcpwire/mcpwire/client"
	stdioclient "github.com/mcpwire/mcpwire/client/stdio"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// A server's main: the engine on the process's stdin and stdout. Serve
// moves the protocol stream off fd 1 first, so a stray fmt.Println in a
// handler lands on stderr; logs go to stderr too.
func ExampleServe() {
	srv := engine.New(engine.Config{Name: "my-server", Version: "1.0.0"})
	_ = srv.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := stdio.Serve(context.Background(), srv, stdio.Config{Logger: log}); err != nil {
		log.Error("stdio", "err", err) // stdout closed by the client: stdio.ErrOutputClosed
	}
	_ = srv.Shutdown(context.Background()) // returns nil when stdin ended: stop the engine
}

// ServeConn runs the same transport over any reader and writer: here a
// request and a line that is not JSON (answered -32700 without an id,
// GEN-05, STD-16) in memory. When the input ends, in-flight requests finish
// (within Config.Grace) and ServeConn returns.
func ExampleServeConn() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"line one"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n" +
		"not json\n")
	var out bytes.Buffer
	if err := stdio.ServeConn(context.Background(), srv, in, &out, stdio.Config{}); err != nil {
		panic(err)
	}
	fmt.Print(out.String())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"line one"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
	// {"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}
}

// The client side: Command spawns the server and a LineTransport speaks
// to it (restarting it if it dies); Close runs the stop sequence.
func ExampleCommand() {
	cmd := &stdioclient.Command{Path: "./my-server", Args: []string{"--stdio"}}
	c := client.New(client.NewLineTransport(cmd.Dial, client.LineConfig{}), client.Config{})
	defer c.Close() // close stdin, wait, SIGTERM, wait, SIGKILL (STD-11)
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
}
