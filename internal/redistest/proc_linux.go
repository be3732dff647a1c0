package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent kills the redis-server if the test process dies first
// (a timeout's panic, a kill), so that no server outlives its test.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
