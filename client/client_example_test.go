package client_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// A Client over a line transport: the server is probed once
// (server/discover), then tools are listed and called. The dialer here
// connects to a server in the same process through a pipe; a real one is
// socket.Dialer("tcp", addr, timeout) or socket.Dialer("unix", path,
// timeout) from client/socket, or (&stdio.Command{…}).Dial from
// client/stdio; client/streamhttp's Dial makes an HTTP transport.
func ExampleNew() {
	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "echo", Description: "Echo the text", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgString("text")
		c.Text(text)
		return nil
	}})
	dial := func(ctx context.Context) (io.ReadWriteCloser, error) {
		ours, theirs := net.Pipe()
		go func() {
			_ = stdio.ServeConn(context.Background(), srv, theirs, theirs, stdio.Config{})
			theirs.Close()
		}()
		return ours, nil
	}

	quiet := slog.New(slog.DiscardHandler)
	t := client.NewLineTransport(dial, client.LineConfig{Logger: quiet})
	c := client.New(t, client.Config{Info: mcp.Implementation{Name: "my-client", Version: "0.1"}, Logger: quiet})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	desc, err := c.Probe(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(desc.Era, desc.Version, desc.Info.Name)
	tools, _ := c.ListTools(ctx)
	for _, tool := range tools {
		fmt.Println(tool.Name, "-", tool.Description)
	}
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hello"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	// Output:
	// modern 2026-07-28 example
	// echo - Echo the text
	// hello
}

// Remote servers are reached over HTTPS. Config.TLSConfig sets the
// roots to trust (nil: the system's); ALPN is http/1.1.
func ExampleNew_https() {
	pem, err := os.ReadFile("/etc/my-app/ca.pem") // a private CA; skip for a public one
	if err != nil {
		fmt.Println(err)
		return
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	t, err := streamhttp.Dial("https://mcp.example.com/mcp", streamhttp.Config{
		TLSConfig: &tls.Config{RootCAs: roots},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := client.New(t, client.Config{})
	defer c.Close()
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "hi"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
}
