//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system CPU time the process has used (0 when
// getrusage fails).
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
