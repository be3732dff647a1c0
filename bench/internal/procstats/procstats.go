// Package procstats gives every comparison server the same SIGUSR1 hook as
// `mcpwire serve`: on each signal one line goes to stderr,
//
//	stats mallocs=<runtime.MemStats.Mallocs> cpu_us=<user+sys CPU µs> rss_kb=<VmRSS>
//
// and bench/compare.sh reads it before and after a load run to compute the
// server's allocations and CPU time per request.
package procstats

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
)

// OnSignal starts a goroutine that writes Line() to stderr on every SIGUSR1
// for the life of the process.
func OnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for range ch {
			fmt.Fprintln(os.Stderr, Line())
		}
	}()
}

// Line is the stats line without its newline.
func Line() string {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) + ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
	return "stats mallocs=" + strconv.FormatUint(ms.Mallocs, 10) +
		" cpu_us=" + strconv.FormatInt(cpu, 10) +
		" rss_kb=" + strconv.FormatInt(RSSKB(), 10)
}

// RSSKB is VmRSS from /proc/self/status in KiB (0 when unavailable).
func RSSKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// StartCPUProfile writes a CPU profile to path until the returned function
// is called (the comparison servers' -cpuprofile flag).
func StartCPUProfile(path string) (stop func()) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
