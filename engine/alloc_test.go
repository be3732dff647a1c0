//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/framing"
)

// TestEchoAllocs pins the steady-state cost of an echo round trip on a
// stream connection: at most 1 allocation per message (issue 2 target).
func TestEchoAllocs(t *testing.T) {
	s := echoServer(t)
	defer func() { _ = s.Shutdown(context.Background()) }()
	cw := &countingWriter{}
	w := framing.NewWriter(cw, framing.WriterOptions{})
	sc := s.NewStreamConn(context.Background(), w, nil)
	defer sc.Close()
	line := make([]byte, 0, 512)
	runEcho(sc, cw, 0, 2000, line)
	i := 0
	const batch = 100
	allocs := testing.AllocsPerRun(50, func() {
		runEcho(sc, cw, i, batch, line)
		i += batch
	}) / batch
	if allocs > 1 {
		t.Fatalf("echo round trip: %.2f allocs per message, want <= 1", allocs)
	}
	t.Logf("%.3f allocs per message", allocs)
}
