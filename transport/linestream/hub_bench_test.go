package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"strconv"
	"testing"
	"time"
)

type discardFrames struct{}

func (discardFrames) WriteFrame(p []byte) error { return nil }

// BenchmarkHubFanout publishes one resource update to 10,000 listen
// streams whose transport discards the frames: the engine's own cost per
// delivery (match, splice the subscription id, hand over). Target: >= 10M
// deliveries/s, 0 allocs per delivery.
func BenchmarkHubFanout(b *testing.B) {
	const listeners = 10000
	s := engine.New(engine.Config{MaxInFlight: listeners + 10})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddResource(engine.Resource{URI: "test://x", Name: "x", Handler: func(c *engine.Call, uri string, _ map[string]string) error { return nil }})
	sc := newStreamConn(s, discardFrames{})
	defer sc.Close()
	for i := 0; i < listeners; i++ {
		line := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://x"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		if err := sc.HandleFrame([]byte(line)); err != nil {
			b.Fatal(err)
		}
	}
	for s.Stats().ListenStreams.Load() != listeners {
		time.Sleep(time.Millisecond)
	}
	s.ResourceUpdated("test://x") // warm the pools
	before := s.Stats().Deliveries.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ResourceUpdated("test://x")
	}
	b.StopTimer()
	d := s.Stats().Deliveries.Load() - before
	if d != uint64(b.N)*listeners {
		b.Fatalf("delivered %d, want %d", d, uint64(b.N)*listeners)
	}
	b.ReportMetric(float64(d)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(d), "ns/delivery")
}
