// Package soak runs `make soak`: mixed calls, listen streams and progress
// on every transport (Streamable HTTP, stdio, TCP, Unix) against the
// reference server for a bounded time, sampling each server process's
// resident memory, goroutines and live heap (after a GC) through its
// admin listener, and fails when any of them drifts by more than 10 %
// between the warm-up plateau and the end (RELIABILITY C15, C18), when
// the echo p99 latency of the last 15 s window is more than four times
// that of the first window after the warm-up plus 40 ms (C18: looser than
// RELIABILITY's 10 % because CI machines are shared; a latency that grows
// with the run shows as a multiple; -p99drift and -p99slack tune it), or
// when the idle server keeps goroutines the load started.
//
//	make soak                 # 2 minutes
//	make soak SOAK=10m        # longer
//	go test -tags soak -run TestSoak -v ./internal/soak -args -soak 45s -rate 200
//
// The test is behind the build tag soak: `go test ./...` does not run it.
package soak
