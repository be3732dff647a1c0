package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain lets the test binary act as the mcpwire command when asked to,
// so that serve runs in a process of its own (it takes over fd 1).
func TestMain(m *testing.M) {
	if size, ok := strings.CutPrefix(os.Getenv("MCPWIRE_TEST_SERVE_STDIO"), "page:"); ok {
		os.Exit(servePaged(size))
	}
	if os.Getenv("MCPWIRE_TEST_SERVE_STDIO") != "" {
		os.Args = []string{"mcpwire", "serve", "--stdio", "--log-level", "warn"}
		main()
		os.Exit(0)
	}
	if args := os.Getenv("MCPWIRE_TEST_MAIN"); args != "" {
		os.Args = append([]string{"mcpwire"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, cmdLeakIgnores...)
}

const listenLine = `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// TestServeShutsDownInOrder: `serve --stdio --http --tcp --unix` shares one
// engine; on SIGTERM every transport stops itself, each open listen stream
// gets its final result on its own transport (SUB-10), the engine stops
// once, and the process exits 0 (issue 8).
func TestServeShutsDownInOrder(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mcp.sock")
	if len(sock) > 100 {
		d, err := os.MkdirTemp("", "serve")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(d)
		sock = filepath.Join(d, "mcp.sock")
	}
	httpAddr, tcpAddr := freeAddr(t), freeAddr(t)
	args := []string{"serve", "--stdio", "--http", httpAddr, "--tcp", tcpAddr, "--unix", sock, "--log-level", "warn", "--grace", "3s"}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// stdio
	out := bufio.NewReader(stdout)
	fmt.Fprintln(stdin, listenLine)
	expectAck(t, "stdio", out)
	// TCP and Unix, once they listen
	var lines []*bufio.Reader
	for _, a := range [][2]string{{"tcp", tcpAddr}, {"unix", sock}} {
		c := dialRetry(t, a[0], a[1])
		defer c.Close()
		fmt.Fprintln(c, listenLine)
		r := bufio.NewReader(c)
		expectAck(t, a[0], r)
		lines = append(lines, r)
	}
	// HTTP: the listen stream is an SSE reply
	req, _ := http.NewRequest("POST", "http://"+httpAddr+"/mcp", strings.NewReader(listenLine))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sse := bufio.NewReader(resp.Body)
	if l := sseData(t, sse); !strings.Contains(l, "acknowledged") {
		t.Fatalf("http ack: %s", l)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	final := func(name, l string) {
		var m struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.ID != "L" || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
			t.Errorf("%s: want the listen stream's final result, got %q", name, l)
		}
	}
	final("stdio", readLine(t, out))
	final("tcp", readLine(t, lines[0]))
	final("unix", readLine(t, lines[1]))
	final("http", sseData(t, sse))
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
	if strings.Contains(stderr.String(), "shutdown") {
		t.Errorf("a shutdown step reported an error:\n%s", stderr.String())
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func dialRetry(t *testing.T, network, addr string) net.Conn {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial(network, addr)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial %s %s: %v", network, addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := r.ReadString('\n')
		ch <- strings.TrimSpace(l)
	}()
	select {
	case l := <-ch:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("timed out reading a line")
		return ""
	}
}

func expectAck(t *testing.T, name string, r *bufio.Reader) {
	t.Helper()
	if l := readLine(t, r); !strings.Contains(l, "notifications/subscriptions/acknowledged") {
		t.Fatalf("%s: want the ack, got %q", name, l)
	}
}

// sseData returns the data of the next SSE event.
func sseData(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		l := readLine(t, r)
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			return d
		}
		if l == "" {
			if _, err := r.Peek(1); err == io.EOF {
				t.Fatal("SSE stream ended")
			}
		}
	}
}
