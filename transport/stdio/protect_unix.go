//go:build unix

package stdio

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ProtectStdout returns a private duplicate of file descriptor 1 for the
// protocol stream and points fd 1 at stderr, so that anything else the
// process prints to stdout lands on stderr (STD-03, A14). Call it once,
// before anything else is written to stdout.
func ProtectStdout() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("stdio: dup stdout: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("stdio: redirect stdout to stderr: %w", err)
	}
	// A pipe (the usual stdout of an MCP server) is made non-blocking, and
	// os.NewFile then serves it through the runtime poller: the reader can
	// write what the pipe takes at once without ever blocking on a parent
	// that is slow to read. Only this process writes to it. A terminal or
	// a file is left as it is (a terminal's mode is shared with the shell).
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO {
		_ = unix.SetNonblock(fd, true)
	}
	return os.NewFile(uintptr(fd), "mcp-stdout"), nil
}

// brokenPipe reports a write to a pipe whose reader has gone (EPIPE).
func brokenPipe(err error) bool { return errors.Is(err, unix.EPIPE) }
