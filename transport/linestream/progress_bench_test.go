package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

type countFrames struct{ n atomic.Int64 }

func (c *countFrames) WriteFrame(p []byte) error { c.n.Add(1); return nil }

// BenchmarkProgressBurst measures a handler reporting progress in a tight
// loop (C9): the cost per Progress call and how many notifications reach
// the transport, with the default 50 ms limiter and with none. It is the
// evidence for the limiter's default.
func BenchmarkProgressBurst(b *testing.B) {
	for _, iv := range []time.Duration{engine.DefaultProgressInterval, -1} {
		name := "interval=" + iv.String()
		if iv < 0 {
			name = "interval=none"
		}
		b.Run(name, func(b *testing.B) {
			s := engine.New(engine.Config{ProgressInterval: iv})
			defer func() { _ = s.Shutdown(context.Background()) }()
			calls := make(chan int, 1)
			_ = s.AddTool(engine.Tool{Name: "burst", Handler: func(c *engine.Call) error {
				n := <-calls
				for i := 1; i <= n; i++ {
					c.Progress(float64(i), float64(n), "")
				}
				c.Text("done")
				return nil
			}})
			out := &countFrames{}
			sc := newStreamConn(s, out)
			defer sc.Close()
			calls <- b.N
			b.ReportAllocs()
			b.ResetTimer()
			line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"burst","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":` + strconv.Itoa(7) + `}}}`
			if err := sc.HandleFrame([]byte(line)); err != nil {
				b.Fatal(err)
			}
			for sc.InFlight() != 0 {
				time.Sleep(50 * time.Microsecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(out.n.Load()-1), "notifications")
		})
	}
}
