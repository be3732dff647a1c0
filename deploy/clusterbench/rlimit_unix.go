//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// raiseFDLimit raises the descriptor limit to its hard limit: each listen
// stream takes one.
func raiseFDLimit() {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil && !errors.Is(err, syscall.EPERM) {
			fmt.Fprintf(os.Stderr, "clusterbench: raising the descriptor limit: %v\n", err)
		}
	}
}
