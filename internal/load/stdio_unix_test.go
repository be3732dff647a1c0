//go:build unix

package load

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestStdioOutputHeldByGrandchild: a server whose child keeps its stdout
// open after the server has exited still lets the run end: the reader of
// the (blocking) pipe gives up once the process is gone (STD-11), instead
// of waiting for an end of file that never comes.
func TestStdioOutputHeldByGrandchild(t *testing.T) {
	testHeldByGrandchild(t, "2>/dev/null")
}

// TestStdioStderrHeldByGrandchild: the same with the child holding the
// server's stderr too. exec.Cmd.Wait waits for its stderr copy to see the
// end of the pipe, so without a WaitDelay the run would never end.
func TestStdioStderrHeldByGrandchild(t *testing.T) {
	testHeldByGrandchild(t, "")
}

func testHeldByGrandchild(t *testing.T, sleepRedirect string) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	if testing.Short() {
		t.Skip("waits out the shutdown grace (about 9 s)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeStdioEnv, "1")
	// sleep inherits stdout (and stderr unless redirected) and outlives the
	// server; its pid goes to the log.
	target := "stdio:/bin/sh -c 'sleep 60 " + sleepRedirect + " & echo grandchild $! >&2; exec \"$0\" -test.run=^$' '" + exe + "'"
	res, log := runLoadLog(t, Config{Target: target, Inflight: 4, Requests: 100})
	if i := strings.Index(log, "grandchild "); i >= 0 {
		var pid int
		if _, err := fmt.Sscan(log[i+len("grandchild "):], &pid); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if held := strings.Contains(log, "still holds its stderr open"); held != (sleepRedirect == "") {
		t.Errorf("warning about the held stderr: %v, want %v; log:\n%s", held, sleepRedirect == "", log)
	}
	if res.Requests != 100 || len(res.Errors) != 0 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
}
