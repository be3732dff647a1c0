package streamhttp_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/client"
	httpclient "github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/testcert"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// HTTPS: Config.TLS with a certificate, and a client trusting its CA. The
// CA here is a throwaway one made for the example (package testcert is
// internal to this module); a deployment loads its files with
// LoadCertFiles.
func ExampleServer_Serve_tls() {
	ca, _ := testcert.NewCA("example CA")
	leaf, _ := ca.Leaf("example server") // for 127.0.0.1, ::1 and localhost
	cert, _ := leaf.TLS()

	srv := engine.New(engine.Config{Name: "example", Version: "1"})
	_ = srv.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		text, _ := c.ArgBytes("text")
		c.TextBytes(text)
		return nil
	}})
	hs := streamhttp.New(srv, streamhttp.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
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

	t, err := httpclient.Dial("https://"+ln.Addr().String()+"/mcp", httpclient.Config{
		TLSConfig: &tls.Config{RootCAs: ca.Pool()},
	})
	if err != nil {
		panic(err)
	}
	c := client.New(t, client.Config{})
	defer c.Close()
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "over TLS"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	// Output: over TLS
}

// A server on a public address: the certificate and key come from PEM
// files a renewal tool replaces; new handshakes pick up the new pair
// within CheckInterval, or at once on SIGHUP.
func ExampleLoadCertFiles() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cf, err := streamhttp.LoadCertFiles("/etc/mcp/tls/cert.pem", "/etc/mcp/tls/key.pem",
		streamhttp.CertConfig{CheckInterval: time.Minute, Logger: log})
	if err != nil {
		log.Error("TLS", "err", err)
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			if err := cf.Reload(); err != nil {
				log.Warn("certificate not reloaded", "err", err)
			}
		}
	}()

	srv := engine.New(engine.Config{Name: "my-server", Version: "1.0.0"})
	hs := streamhttp.New(srv, streamhttp.Config{
		AllowNonLoopback: true,
		TLS:              cf.TLSConfig(),
		AllowedOrigins:   []string{"https://app.example.com"},
	})
	if err := hs.ListenAndServe("0.0.0.0:443"); err != nil {
		log.Error("serve", "err", err)
	}
}
