//go:build unix

package load

import "syscall"

// cpuTimeUs is the user+system CPU time of this process in microseconds.
func cpuTimeUs() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Utime.Sec)*1e6 + int64(ru.Utime.Usec) + int64(ru.Stime.Sec)*1e6 + int64(ru.Stime.Usec)
}
