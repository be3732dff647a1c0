//go:build windows

package stdio

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// ProtectStdout returns a private duplicate of the standard output handle
// for the protocol stream and sends what the process prints to stdout
// to stderr instead (STD-03, A14). Call it once, before anything else is
// written to stdout.
//
// Windows has no dup2: a handle cannot be made to point at another file,
// so the Unix way (fd 1 becomes stderr underneath everyone) is not
// available. Instead os.Stdout is replaced by a file on a duplicate of the
// stderr handle, the process's standard output handle (SetStdHandle, what
// GetStdHandle and children that inherit standard handles see) is that
// duplicate too, and the original os.Stdout is closed. So fmt.Println and
// anything else that looks up os.Stdout when it writes lands on stderr, and
// code that kept the original *os.File gets os.ErrClosed instead of
// writing into the stream. The limit: code outside Go's os package that
// saved the raw handle earlier (C's stdio through cgo, a handle taken with
// Fd) writes to a closed handle, whose number Windows may give to another
// object later.
func ProtectStdout() (*os.File, error) {
	proc := windows.CurrentProcess()
	dup := func(f *os.File) (windows.Handle, error) {
		var h windows.Handle
		err := windows.DuplicateHandle(proc, windows.Handle(f.Fd()), proc, &h, 0, false, windows.DUPLICATE_SAME_ACCESS)
		return h, err
	}
	out, err := dup(os.Stdout)
	if err != nil {
		return nil, fmt.Errorf("stdio: duplicate stdout: %w", err)
	}
	stray, err := dup(os.Stderr)
	if err == nil {
		err = windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, stray)
		if err != nil {
			windows.CloseHandle(stray)
		}
	}
	if err != nil {
		windows.CloseHandle(out)
		return nil, fmt.Errorf("stdio: redirect stdout to stderr: %w", err)
	}
	orig := os.Stdout
	os.Stdout = os.NewFile(uintptr(stray), "/dev/stdout")
	_ = orig.Close()
	return os.NewFile(uintptr(out), "mcp-stdout"), nil
}

// brokenPipe reports a write to a pipe whose reader has gone: Windows says
// ERROR_NO_DATA ("the pipe is being closed") or ERROR_BROKEN_PIPE, never
// EPIPE.
func brokenPipe(err error) bool {
	return errors.Is(err, windows.ERROR_NO_DATA) || errors.Is(err, windows.ERROR_BROKEN_PIPE)
}
