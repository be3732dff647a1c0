package redisstate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/state"
)

// Benchmarks on a real redis-server (skipped without one, unless
// MCPWIRE_REQUIRE_REDIS is set):
//
//	go test -run='^$' -bench=. ./state/redisstate/

func benchStore(b *testing.B) *Store {
	r := startRedis(b)
	s, err := New(context.Background(), r.URL(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

var benchValue = make([]byte, 256)

func BenchmarkCreate(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchValue)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Create(ctx, "alice", benchValue, time.Minute); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkGet(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	h, err := s.Create(ctx, "alice", benchValue, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchValue)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(ctx, "alice", h); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkCompareAndSet(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchValue)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		// One record per goroutine: no conflicts, so every op is a write.
		h, err := s.Create(ctx, "alice", benchValue, time.Hour)
		if err != nil {
			b.Error(err)
			return
		}
		v := uint64(1)
		for pb.Next() {
			if v, err = s.CompareAndSet(ctx, "alice", h, v, benchValue, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkPublishDeliver: one replica publishes, another receives; the
// time from Publish to deliver, one cue at a time, reported as p50/p99
// metrics (µs).
func BenchmarkPublishDeliver(b *testing.B) {
	r := startRedis(b)
	ctx := context.Background()
	var replicas [2]*Store
	for i := range replicas {
		s, err := New(ctx, r.URL(), Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		replicas[i] = s
	}
	got := make(chan struct{}, 1)
	if err := replicas[1].Subscribe(ctx, func(state.Cue) { got <- struct{}{} }, nil, nil); err != nil {
		b.Fatal(err)
	}
	cue := state.Cue{Kind: state.CueResourceUpdated, URI: "test://bench/resource"}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := replicas[0].Publish(ctx, cue); err != nil {
			b.Fatal(err)
		}
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			b.Fatal("cue not delivered within 5s")
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}
