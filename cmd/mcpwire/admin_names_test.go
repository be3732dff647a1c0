package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeAdminCounterNames: serve --admin with --legacy-path exports
// the legacy endpoint's counters (mcpwire_legacy_*) and the renamed
// series (duplicate_ids, the disconnect counters), each with its HELP
// text (issue 20).
func TestServeAdminCounterNames(t *testing.T) {
	httpAddr, adminAddr := freeAddr(t), freeAddr(t)
	args := []string{"serve", "--http", httpAddr, "--legacy-path", "/mcp-2025", "--admin", adminAddr, "--log-level", "warn"}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, b, err := adminGet("http://" + adminAddr + "/metrics")
		if err == nil && code == 200 {
			body = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admin listener never answered: %d %v", code, err)
		}
	}
	for _, want := range []string{
		"# HELP mcpwire_engine_duplicate_ids_total Requests that reused the id of a request still in flight.",
		"mcpwire_engine_duplicate_ids_total 0",
		"mcpwire_http_disconnects_total 0",
		"mcpwire_legacy_sessions 0",
		"mcpwire_legacy_created_total 0",
	} {
		if !strings.Contains(body, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "_i_ds") || strings.Contains(body, "# HELP mcpwire_engine_requests_total mcpwire engine.Stats") {
		t.Error("/metrics still has a derived name or HELP text")
	}
}
