//go:build !unix

package stdio

import (
	"errors"
	"os"
)

// terminate has no signal to send: on Windows a process cannot be asked to
// stop the way SIGTERM asks (os.Process.Signal only kills there), so the
// stop sequence goes from the closed stdin, after CloseWait, straight to
// Kill.
func terminate(*os.Process) bool { return false }

// errKilled is Close's report when the child had to be killed.
var errKilled = errors.New("stdio: server killed after it did not exit once its stdin closed")
