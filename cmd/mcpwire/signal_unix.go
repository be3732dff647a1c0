//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
)

// tlsReloadHelp says when --tls-cert is reloaded, for the help texts.
const tlsReloadHelp = "reloaded when the files change, and on SIGHUP"

// dumpStatsOnSignal writes one line of process counters to stderr on every
// SIGUSR1 until ctx ends: the comparison harness reads it before and after
// a load run to compute allocations and CPU per request of the server.
//
//	stats mallocs=<runtime mallocs> cpu_us=<user+system CPU> rss_kb=<resident set>
func dumpStatsOnSignal(ctx context.Context) {
	onSignal(ctx, syscall.SIGUSR1, func() { fmt.Fprintln(os.Stderr, statsLine()) })
}

// onHangup runs fn on every SIGHUP until ctx ends (serve's certificate
// reload).
func onHangup(ctx context.Context, fn func()) {
	onSignal(ctx, syscall.SIGHUP, fn)
}

// onSignal runs fn on one goroutine for every sig received until ctx ends.
func onSignal(ctx context.Context, sig os.Signal, fn func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				fn()
			}
		}
	}()
}

func statsLine() string {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) + ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
	return fmt.Sprintf("stats mallocs=%d cpu_us=%d rss_kb=%d", ms.Mallocs, cpu, rssKB())
}

func rssKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb
		}
	}
	return 0
}
