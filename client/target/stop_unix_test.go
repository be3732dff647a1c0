//go:build unix

package target_test

import (
	"context"
	"io"
	"strings"
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
