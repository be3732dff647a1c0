//go:build unix

package stdio

import (
	"errors"
	"os"
	"syscall"
)

// terminate asks the child to stop (SIGTERM): the second step of the stop
// sequence. It reports whether the signal was sent.
func terminate(p *os.Process) bool { return p.Signal(syscall.SIGTERM) == nil }

// errKilled is Close's report when the child had to be killed.
var errKilled = errors.New("stdio: server killed (SIGKILL) after ignoring SIGTERM")
