package socket_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/socket"
)

// An engine served on TCP (and, with another Listen, on a Unix socket) by
// gnet event loops: each line is one JSON-RPC message.
func ExampleServer() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})

	s := socket.New(srv, socket.Config{})
	if err := s.Listen("tcp", "127.0.0.1:0"); err != nil { // s.Listen("unix", "/run/app/mcp.sock") as well
		panic(err)
	}
	if err := s.Start(); err != nil {
		panic(err)
	}
	// The transport stops itself; whoever created the engine stops it after.
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()

	conn, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	line, _ := bufio.NewReader(conn).ReadString('\n')
	fmt.Print(line)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
}

// Config.Authenticate establishes a connection's principal before any of
// its requests runs: here the Unix peer's user id (SO_PEERCRED), which
// handlers read with Call.Principal.
func ExampleConfig_authenticate() {
	srv := engine.New(engine.Config{})
	_ = srv.AddTool(engine.Tool{Name: "whoami", Handler: func(c *engine.Call) error {
		c.Text(fmt.Sprint(c.Principal()))
		return nil
	}})
	s := socket.New(srv, socket.Config{
		Authenticate: func(ctx context.Context, p socket.Peer) (any, error) {
			if p.Cred == nil {
				return nil, fmt.Errorf("no peer credentials on %s", p.Network)
			}
			return fmt.Sprintf("uid:%d", p.Cred.UID), nil
		},
	})
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcp.sock")
	if err := s.Listen("unix", path); err != nil {
		panic(err)
	}
	if err := s.Start(); err != nil {
		panic(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	}()
	conn, err := net.Dial("unix", path)
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	line, _ := bufio.NewReader(conn).ReadString('\n')
	fmt.Println(strings.Contains(line, fmt.Sprintf(`"text":"uid:%d"`, os.Getuid())))
	// Output: true
}
