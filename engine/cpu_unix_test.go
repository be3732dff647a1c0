//go:build unix

package engine

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time the process has used. On a
// machine shared with other work, CPU time per request moves far less
// than the wall-clock time per request (ns/op), which counts the time
// other processes hold the cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
