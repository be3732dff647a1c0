package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckAdminAddr(t *testing.T) {
	for i, c := range []struct {
		addr    string
		allowNL bool
		mcp     []string
		wantErr string
	}{
		{"127.0.0.1:9090", false, []string{"127.0.0.1:8080"}, ""},
		{"[::1]:9090", false, nil, ""},
		{"0.0.0.0:9090", false, nil, "not a loopback"},
		{"10.0.0.1:9090", false, nil, "not a loopback"},
		{"0.0.0.0:9090", true, nil, ""},
		{"127.0.0.1:8080", false, []string{"127.0.0.1:8080"}, "MCP listener"},
		{"localhost:8080", false, []string{"", "127.0.0.1:8080"}, "MCP listener"},
		{"0.0.0.0:8080", true, []string{"127.0.0.1:8080"}, "MCP listener"},
		{"127.0.0.1:0", false, []string{"127.0.0.1:0"}, ""},
		{"", false, []string{"127.0.0.1:8080"}, ""},
	} {
		err := checkAdminAddr(c.addr, c.allowNL, c.mcp...)
		if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%d: checkAdminAddr(%q) = %v, want %q", i, c.addr, err, c.wantErr)
		}
	}
}

func adminGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// TestServeAdmin: `serve --admin` serves /metrics with the transports'
// series (a TCP call shows under transport "tcp", its connection in
// open_connections) and /readyz; on SIGTERM /readyz answers 503 while a
// call still drains, and the process exits 0 once it is done.
func TestServeAdmin(t *testing.T) {
	httpAddr, tcpAddr, adminAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	args := []string{"serve", "--http", httpAddr, "--tcp", tcpAddr, "--admin", adminAddr, "--log-level", "warn", "--grace", "5s"}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://" + adminAddr

	c := dialRetry(t, "tcp", tcpAddr)
	defer c.Close()
	r := bufio.NewReader(c)
	fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if l := readLine(t, r); !strings.Contains(l, `"hi"`) {
		t.Fatalf("echo: %q", l)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, _, err := adminGet(base + "/healthz"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admin listener never answered\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, body, err := adminGet(base + "/metrics")
	if err != nil || code != 200 {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	for _, want := range []string{
		`mcpwire_request_duration_seconds_count{method="tools/call",transport="tcp"} 1`,
		`mcpwire_open_connections{transport="tcp"} 1`,
		`mcpwire_open_connections{transport="http"} 0`,
		"mcpwire_engine_requests_total 1",
		"mcpwire_socket_accepted_total 1",
		"mcpwire_http_not_found_total 0",
		"mcpwire_mrtr_tampered_total 0", // the fixtures' requestState signer
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _, err := adminGet(base + "/readyz"); err != nil || code != 200 {
		t.Fatalf("/readyz before shutdown: %d %v", code, err)
	}

	// A call that takes 1.5 s holds the shutdown open.
	fmt.Fprintln(c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(1200 * time.Millisecond)
	for {
		code, body, err := adminGet(base + "/readyz")
		if err == nil && code == 503 && strings.Contains(body, "shutting down") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz during the drain: %d %q %v", code, body, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if l := readLine(t, r); !strings.Contains(l, `"id":2`) || !strings.Contains(l, `"result"`) {
		t.Fatalf("the draining call: %q", l)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM\n%s", stderr.String())
	}
	if _, _, err := adminGet(base + "/healthz"); err == nil {
		t.Fatal("the admin listener outlived the process")
	}
}

// TestServeAdminStdio: with --stdio, /metrics shows the stdio connection
// and the output it has queued for a parent that does not read.
func TestServeAdminStdio(t *testing.T) {
	adminAddr := freeAddr(t)
	args := []string{"serve", "--stdio", "--admin", adminAddr, "--log-level", "warn"}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe() // not read until the end: replies queue
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	text := strings.Repeat("x", 1000)
	for i := 0; i < 400; i++ { // about 400 KB of replies: beyond the 64 KiB pipe
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n", i, text)
	}
	base := "http://" + adminAddr
	var queued float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, body, err := adminGet(base + "/metrics"); err == nil && code == 200 {
			if !strings.Contains(body, "\n"+`mcpwire_open_connections{transport="stdio"} 1`+"\n") {
				t.Fatalf("/metrics lacks the stdio connection:\n%s", body)
			}
			for _, l := range strings.Split(body, "\n") {
				if v, ok := strings.CutPrefix(l, `mcpwire_queued_bytes{transport="stdio"} `); ok {
					queued, _ = strconv.ParseFloat(v, 64)
				}
			}
			if queued > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued_bytes{stdio} still %v with the replies unread\n%s", queued, stderr.String())
		}
	}
	stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
}

// TestServeAdminStdioLegacy: with --stdio --stdio-legacy (no --legacy-path)
// the legacy front is made before the admin listener, so its counters are
// exported (they were missing: the front was made when stdio started).
func TestServeAdminStdioLegacy(t *testing.T) {
	adminAddr := freeAddr(t)
	args := []string{"serve", "--stdio", "--stdio-legacy", "--admin", adminAddr, "--log-level", "warn"}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, body, err := adminGet("http://" + adminAddr + "/metrics"); err == nil && code == 200 {
			if !strings.Contains(body, "\nmcpwire_legacy_sessions ") || !strings.Contains(body, `mcpwire_limit_refused_total{limit="sessions_per_ip"}`) {
				t.Fatalf("/metrics lacks the legacy front's counters:\n%s", body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /metrics\n%s", stderr.String())
		}
	}
}
