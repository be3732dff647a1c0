package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/client"
	httpclient "github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/internal/testcert"
)

// TestHTTPSServer runs the program with a throwaway CA's certificate on
// loopback (the program would take a public address the same way): a
// client trusting the CA and sending the token calls the tool; without the
// token it gets 401; a browser Origin is refused.
func TestHTTPSServer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
	dir := t.TempDir()
	ca, err := testcert.NewCA("example CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf("example server", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := leaf.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	const token = "a-long-enough-test-token"
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", cert: cert, key: key, tokenFile: filepath.Join(dir, "token")},
			func(a string) { addrc <- a })
	}()
	var url string
	select {
	case a := <-addrc:
		url = "https://" + a + "/mcp"
	case err := <-done:
		t.Fatal(err)
	}
	call := func(header http.Header) (string, error) {
		tr, err := httpclient.Dial(url, httpclient.Config{TLSConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}, Header: header})
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(tr, client.Config{})
		defer c.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := c.CallTool(cctx, "whoami", nil, nil)
		if err != nil {
			return "", err
		}
		return res.Text(), nil
	}
	if got, err := call(http.Header{"Authorization": {"Bearer " + token}}); err != nil || got != "you are the token holder" {
		t.Fatalf("with the token: %q, %v", got, err)
	}
	var se *client.StatusError
	if _, err := call(nil); !errors.As(err, &se) || se.Status != http.StatusUnauthorized {
		t.Fatalf("without the token: %v, want a 401", err)
	}
	if _, err := call(http.Header{"Authorization": {"Bearer " + token}, "Origin": {"https://evil.example"}}); !errors.As(err, &se) || se.Status != http.StatusForbidden {
		t.Fatalf("from a browser origin: %v, want a 403", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
