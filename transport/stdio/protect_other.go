//go:build !unix && !windows

package stdio

import (
	"errors"
	"os"
	"syscall"
)

// ProtectStdout returns os.Stdout unchanged on systems that are neither
// Unix nor Windows (no dup2, no SetStdHandle): stray prints there do reach
// the protocol stream.
func ProtectStdout() (*os.File, error) {
	return os.NewFile(os.Stdout.Fd(), "mcp-stdout"), nil
}

// brokenPipe reports a write to a pipe whose reader has gone (EPIPE).
func brokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
