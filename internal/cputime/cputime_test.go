//go:build unix

package cputime

import "testing"

// TestProcessMoves: CPU time the process burns shows in Process, and it
// never goes back.
func TestProcessMoves(t *testing.T) {
	before := Process()
	x := uint64(1)
	for i := 0; i < 200_000_000 && Process() == before; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	after := Process()
	if after <= before {
		t.Fatalf("Process went from %v to %v while the loop ran (%d)", before, after, x)
	}
}
