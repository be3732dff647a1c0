// Command https-server is a remote MCP server: Streamable HTTP over TLS on
// a public address, its certificate reloaded when the files change, a
// browser Origin allow-list, and a bearer token every request must carry.
//
//	https-server -addr 0.0.0.0:8443 -cert cert.pem -key key.pem -token-file token -origin https://app.example.com
//
// A static token is the simplest authenticator; a deployment behind an
// identity provider verifies OAuth access tokens in Authenticate instead.
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

type config struct {
	addr, cert, key, tokenFile string
	origins                    []string
}

func main() {
	var c config
	origins := flag.String("origin", "", "comma-separated browser origins allowed to call (none if empty)")
	flag.StringVar(&c.addr, "addr", "0.0.0.0:8443", "address to serve HTTPS on")
	flag.StringVar(&c.cert, "cert", "cert.pem", "PEM certificate chain")
	flag.StringVar(&c.key, "key", "key.pem", "PEM private key")
	flag.StringVar(&c.tokenFile, "token-file", "token", "file holding the bearer token clients must send")
	flag.Parse()
	if *origins != "" {
		c.origins = strings.Split(*origins, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, func(addr string) { log.Printf("https-server: https://%s/mcp", addr) }); err != nil {
		log.Fatal(err)
	}
}

// run serves until ctx ends; ready receives the address listened on.
func run(ctx context.Context, c config, ready func(addr string)) error {
	token, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return err
	}
	want := []byte(strings.TrimSpace(string(token)))
	if len(want) < 16 {
		return errors.New("the token must be at least 16 characters")
	}
	certs, err := streamhttp.LoadCertFiles(c.cert, c.key, streamhttp.CertConfig{})
	if err != nil {
		return err
	}

	srv := engine.New(engine.Config{Name: "remote-example", Version: "1.0.0"})
	err = srv.AddTool(engine.Tool{
		Name: "whoami",
		Handler: func(call *engine.Call) error {
			call.Text("you are " + call.Principal().(string))
			return nil
		},
	})
	if err != nil {
		return err
	}

	origins := c.origins
	if origins == nil {
		origins = []string{} // no browser origin at all, rather than the loopback default
	}
	hs := streamhttp.New(srv, streamhttp.Config{
		TLS:              certs.TLSConfig(),
		AllowNonLoopback: true,
		AllowedOrigins:   origins,
		Authenticate: func(_ context.Context, got string) (any, error) {
			if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
				return nil, errors.New("unknown token") // 401 with WWW-Authenticate
			}
			return "the token holder", nil // the principal handlers see
		},
	})
	ln, err := hs.Listen(c.addr)
	if err != nil {
		return err
	}
	ready(ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-done:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	_ = srv.Shutdown(sctx)
	return err
}
