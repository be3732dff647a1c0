package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/refserver"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// mcpwire runs the command in a child process (the test binary acting as
// mcpwire) and returns its stdout, stderr and exit code.
func mcpwire(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mcpwire %v did not finish", args)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// stdioServer is a stdio target that runs this test binary as
// `mcpwire serve --stdio`.
func stdioServer() string {
	return "stdio:env -u MCPWIRE_TEST_MAIN MCPWIRE_TEST_SERVE_STDIO=1 '" + os.Args[0] + "'"
}

// tcpServer starts `mcpwire serve --tcp` and returns its target.
func tcpServer(t *testing.T) string {
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join([]string{"serve", "--tcp", addr, "--log-level", "warn"}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	dialRetry(t, "tcp", addr).Close()
	return "tcp://" + addr
}

// TestProbe: `mcpwire probe --json` reports the era, revision, server info,
// capabilities and tools of a server it spawns (issue 10).
func TestProbe(t *testing.T) {
	out, errOut, code := mcpwire(t, "probe", "--json", stdioServer())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Era        string `json:"era"`
		Version    string `json:"protocolVersion"`
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		Tools        []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("probe output is not JSON: %v\n%s", err, out)
	}
	if rep.Era != "modern" || rep.Version != "2026-07-28" || rep.ServerInfo.Name != "mcpwire-refserver" || rep.Capabilities["tools"] == nil {
		t.Fatalf("probe: %+v", rep)
	}
	found := false
	for _, tl := range rep.Tools {
		found = found || tl.Name == "echo"
	}
	if !found {
		t.Fatalf("probe lists no echo tool: %s", out)
	}
}

// servePaged serves the reference fixtures on stdio, size entries to a
// page (engine.Config.PageSize).
func servePaged(size string) int {
	n, err := strconv.Atoi(size)
	var srv *engine.Server
	if err == nil {
		srv, err = refserver.New(refserver.Config{PageSize: n})
	}
	if err == nil {
		err = stdio.Serve(context.Background(), srv, stdio.Config{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "paged server:", err)
		return 1
	}
	return 0
}

// TestProbePaged: `mcpwire probe` lists every tool of a server that pages
// tools/list (two to a page: the reference server's tools take more than
// ten pages), the same tools as from one page.
func TestProbePaged(t *testing.T) {
	tools := func(target string) []string {
		out, errOut, code := mcpwire(t, "probe", "--json", target)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var rep struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("probe output is not JSON: %v\n%s", err, out)
		}
		var names []string
		for _, tl := range rep.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	server := func(size int) string {
		return fmt.Sprintf("stdio:env -u MCPWIRE_TEST_MAIN MCPWIRE_TEST_SERVE_STDIO=page:%d '%s'", size, os.Args[0])
	}
	paged, whole := tools(server(2)), tools(server(-1))
	if len(paged) < 20 || strings.Join(paged, " ") != strings.Join(whole, " ") {
		t.Fatalf("paged probe lists %d tools %v,\none page %d %v", len(paged), paged, len(whole), whole)
	}
}

// TestCall: `mcpwire call` over TCP prints the result on stdout, progress
// on stderr, and exits 1 with the error on stderr (only) on a JSON-RPC
// error.
func TestCall(t *testing.T) {
	tgt := tcpServer(t)
	out, errOut, code := mcpwire(t, "call", tgt, "echo", `{"text":"hi there"}`)
	if code != 0 || !strings.Contains(out, `"hi there"`) {
		t.Fatalf("echo: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	out, errOut, code = mcpwire(t, "call", tgt, "test_tool_with_progress")
	if code != 0 || strings.Count(errOut, "progress ") != 3 {
		t.Fatalf("progress: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	out, _, code = mcpwire(t, "call", tgt, "resources/read", `{"uri":"test://static-text"}`)
	if code != 0 || !strings.Contains(out, `"contents"`) {
		t.Fatalf("resources/read: exit %d %s", code, out)
	}
	out, errOut, code = mcpwire(t, "call", tgt, "no_such_tool")
	if code != 1 || out != "" || !strings.Contains(errOut, "-32602") {
		t.Fatalf("unknown tool: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}
