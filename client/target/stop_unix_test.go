//go:build unix

package target_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	stdioclient "github.com/mcpwire/mcpwire/client/stdio"
)

// TestStdioStopSequence: Close on a server that ignores stdin's end and
// SIGTERM ends in SIGKILL within the configured waits (STD-11).
func TestStdioStopSequence(t *testing.T) {
	cmd := &stdioclient.Command{Path: "/bin/sh", Args: []string{"-c", `trap "" TERM; while :; do sleep 1; done`},
		CloseWait: 100 * time.Millisecond, TermWait: 100 * time.Millisecond, Logger: quiet()}
	rwc, err := cmd.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = rwc.Close()
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Fatalf("Close = %v, want the SIGKILL report", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stop took %v", d)
	}
	// A well-behaved server exits when stdin closes: no error.
	cmd = &stdioclient.Command{Path: "/bin/cat", Logger: quiet()}
	rwc, err = cmd.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(rwc, "x\n"); err != nil {
		t.Fatal(err)
	}
	if err := rwc.Close(); err != nil {
		t.Fatalf("cat: %v", err)
	}
}

// TestStdioStderrHeldByGrandchild: a server whose child keeps the
// server's stderr open after the server has exited does not hang Close:
// the stderr reader stops once the server is gone and a short grace has
// passed (STD-11).
func TestStdioStderrHeldByGrandchild(t *testing.T) {
	pids := make(chan string, 4)
	cmd := &stdioclient.Command{Path: "/bin/sh", Args: []string{"-c", `sleep 60 >/dev/null & echo grandchild $! >&2; exec cat`},
		Logger: quiet(), Stderr: func(line string) {
			if pid, ok := strings.CutPrefix(line, "grandchild "); ok {
				pids <- pid
			}
		}}
	rwc, err := cmd.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var pid string
	select {
	case pid = <-pids:
	case <-time.After(10 * time.Second):
		t.Fatal("no grandchild pid on stderr")
	}
	defer func() {
		if n, err := strconv.Atoi(pid); err == nil && n > 0 {
			_ = syscall.Kill(n, syscall.SIGKILL)
		}
	}()
	done := make(chan error, 1)
	go func() { done <- rwc.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close = %v, want nil (cat exits when stdin closes)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waits for the stderr a grandchild holds")
	}
}
