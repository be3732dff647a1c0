package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/internal/testcert"
)

// TestLoadTLS: `mcpwire load` drives `serve --tls-cert --tls-key` on an
// https:// target with the test CA trusted (--cacert), and without it
// stops before any request with an error naming the unknown authority and
// the flag; the TLS flags need an https:// target and --client-cert needs
// --client-key.
func TestLoadTLS(t *testing.T) {
	ca, err := testcert.NewCA("mcpwire load test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf("load", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, err := leaf.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0])
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join([]string{"serve", "--http", addr, "--tls-cert", certFile, "--tls-key", keyFile, "--log-level", "error"}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	dialRetry(t, "tcp", addr).Close()
	url := "https://" + addr + "/mcp"

	out, errOut, code := mcpwire(t, "load", "--cacert", caFile, "-c", "2", "-n", "50", "-warmup", "0s", "-json", url)
	if code != 0 || !strings.Contains(out, `"requests":50,`) || !strings.Contains(out, `"errors":{}`) {
		t.Fatalf("load over TLS: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	_, errOut, code = mcpwire(t, "load", "-c", "2", "-n", "5", "-timeout", "5s", url)
	if code == 0 || !strings.Contains(errOut, "certificate signed by unknown authority") || !strings.Contains(errOut, "--cacert") {
		t.Fatalf("load without the CA: exit %d, stderr %s", code, errOut)
	}
	_, errOut, code = mcpwire(t, "load", "--cacert", caFile, "-n", "5", "http://"+addr+"/mcp")
	if code == 0 || !strings.Contains(errOut, "need an https:// target") {
		t.Fatalf("--cacert on http://: exit %d, stderr %s", code, errOut)
	}
	_, errOut, code = mcpwire(t, "load", "--client-cert", certFile, "-n", "5", url)
	if code == 0 || !strings.Contains(errOut, "--client-cert and --client-key go together") {
		t.Fatalf("--client-cert alone: exit %d, stderr %s", code, errOut)
	}
}

// TestClientTLSFiles: --client-cert and --client-key load the pair that
// call, probe and load present to a server asking for a client
// certificate; none of the three flags means the defaults (nil).
func TestClientTLSFiles(t *testing.T) {
	ca, err := testcert.NewCA("client files CA")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ca.ClientLeaf("the client")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, err := cl.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := clientTLS("", "", ""); c != nil || err != nil {
		t.Fatalf("no flags: %v, %v", c, err)
	}
	c, err := clientTLS("", certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certificates) != 1 || c.RootCAs != nil {
		t.Fatalf("%d certificates, roots %v", len(c.Certificates), c.RootCAs)
	}
	if _, err := clientTLS("", certFile, filepath.Join(dir, "missing.pem")); err == nil || !strings.Contains(err.Error(), "--client-key") {
		t.Fatalf("missing key: %v", err)
	}
}
