//go:build !unix

package cputime

import "time"

// Process is 0 where getrusage is not at hand: no CPU figures there.
func Process() time.Duration { return 0 }
