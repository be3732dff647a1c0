//go:build unix

package stdio

import (
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
	return os.NewFile(uintptr(fd), "mcp-stdout"), nil
}
