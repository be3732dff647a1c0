package main

import (
	"bytes"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/testcert"
)

// TestServeTLS: `serve --http --tls-cert --tls-key` answers `call` and
// `probe` on an https:// target that trust the test CA (--cacert), refuses
// a client that does not, and serves a renewed certificate after SIGHUP
// without a restart.
func TestServeTLS(t *testing.T) {
	ca, err := testcert.NewCA("mcpwire cli test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf("first")
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
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join([]string{"serve", "--http", addr, "--tls-cert", certFile, "--tls-key", keyFile, "--log-level", "info"}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	dialRetry(t, "tcp", addr).Close()
	_, port, _ := strings.Cut(addr, ":")
	url := "https://localhost:" + port + "/mcp"

	out, errOut, code := mcpwire(t, "call", "--cacert", caFile, url, "echo", `{"text":"over tls"}`)
	if code != 0 || !strings.Contains(out, `"over tls"`) {
		t.Fatalf("call: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	out, errOut, code = mcpwire(t, "probe", "--cacert", caFile, url)
	if code != 0 || !strings.Contains(out, "2026-07-28") {
		t.Fatalf("probe: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	_, errOut, code = mcpwire(t, "call", "--timeout", "5s", url, "echo", `{"text":"x"}`)
	if code == 0 || !strings.Contains(errOut, "certificate") {
		t.Fatalf("call without the CA: exit %d, stderr %s", code, errOut)
	}

	serial := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	if got := serial(); got != leaf.Serial.String() {
		t.Fatalf("serial %s, want %s", got, leaf.Serial)
	}
	next, err := ca.Leaf("renewed")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := next.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); serial() != next.Serial.String(); {
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate was not served after SIGHUP; stderr:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServePlaintextRule: a non-loopback --http address without TLS needs
// --insecure-plaintext.
func TestServePlaintextRule(t *testing.T) {
	_, errOut, code := mcpwire(t, "serve", "--http", "0.0.0.0:0", "--allow-non-loopback")
	if code == 0 || !strings.Contains(errOut, "--insecure-plaintext") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
}
