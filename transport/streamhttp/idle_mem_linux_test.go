package streamhttp

import (
	"fmt"
	"testing"

	"github.com/mcpwire/mcpwire/internal/idlemem"
)

// idleListenBudget bounds what an idle listen stream holds in process,
// live heap plus goroutine stack as it grew (idlemem.Idle), in bytes.
const idleListenBudget = 6 << 10

// measureIdleListens opens n listen streams from bare sockets on a
// server of its own (idlemem.Open with gcEvery), closes them, and returns
// what each held once acknowledged and idle.
func measureIdleListens(t *testing.T, n, gcEvery int) idlemem.Result {
	t.Helper()
	eng, _, addr := fanoutServer(t, Config{})
	live := func() int { return int(eng.Stats().ListenStreams.Load()) }
	res, fds, err := idlemem.OpenListens(addr, n, gcEvery, func(i int) string { return fmt.Sprintf(listenBody, i) }, live)
	// An idle stream learns of its client's leaving only at its next
	// write: the server's shutdown (fanoutServer's cleanup) ends them.
	idlemem.Close(fds)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mcpwire listen stream: %v", res)
	// A parked stream's pump has returned (rawPump); a goroutine or two
	// of the server's own (fasthttp's worker) may have started meanwhile.
	if res.Goroutines > 0.05 {
		t.Errorf("%.2f goroutines per idle stream, want 0 (the pump returns once it has nothing to write)", res.Goroutines)
	}
	return res
}

// TestIdleListenBytes opens 1,000 listen streams from bare sockets, twice
// (collection off while they open, then a collection every 50 streams),
// and bounds what each holds in the server once acknowledged and idle:
// live heap and goroutine stack (issue 21 goal 5, ≤ 16 KiB of RSS per
// idle stream). `go test -run IdleListenBytes -v` prints the figures.
func TestIdleListenBytes(t *testing.T) {
	leakCheck(t)
	n := 1000
	if raceEnabled {
		n = 200 // the race detector's shadow memory: only the goroutine count is checked
	}
	var nogc, gc idlemem.Result
	t.Run("nogc", func(t *testing.T) { nogc = measureIdleListens(t, n, 0) })
	t.Run("gc", func(t *testing.T) { gc = measureIdleListens(t, n, 50) })
	idle := idlemem.Idle(gc, nogc)
	t.Logf("mcpwire listen stream: heap %.0f B + stack %.0f B = %.0f B (%.2f KiB) per idle stream", max(gc.HeapAlloc, nogc.HeapAlloc), nogc.StackOpen, idle, idle/1024)
	if !raceEnabled && !t.Failed() && idle > idleListenBudget {
		t.Errorf("an idle listen stream holds %.0f bytes (heap %.0f + stack %.0f), want ≤ %d", idle, max(gc.HeapAlloc, nogc.HeapAlloc), nogc.StackOpen, idleListenBudget)
	}
}
