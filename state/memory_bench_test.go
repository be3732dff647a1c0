package state_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/state"
)

var benchValue = make([]byte, 256)

func BenchmarkMemoryCreate(b *testing.B) {
	m := state.NewMemory(state.MemoryConfig{MaxRecords: -1})
	defer m.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchValue)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Create(ctx, "alice", benchValue, time.Minute); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkMemoryGet(b *testing.B) {
	m := state.NewMemory(state.MemoryConfig{})
	defer m.Close()
	ctx := context.Background()
	h, _ := m.Create(ctx, "alice", benchValue, time.Hour)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchValue)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Get(ctx, "alice", h); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkMemoryCompareAndSet(b *testing.B) {
	m := state.NewMemory(state.MemoryConfig{})
	defer m.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchValue)))
	b.RunParallel(func(pb *testing.PB) {
		h, err := m.Create(ctx, "alice", benchValue, time.Hour)
		if err != nil {
			b.Error(err)
			return
		}
		v := uint64(1)
		for pb.Next() {
			if v, err = m.CompareAndSet(ctx, "alice", h, v, benchValue, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkMemoryPublishDeliver: Publish to deliver on one subscriber, one
// cue at a time, as p50/p99 metrics (µs).
func BenchmarkMemoryPublishDeliver(b *testing.B) {
	m := state.NewMemory(state.MemoryConfig{})
	defer m.Close()
	ctx := context.Background()
	got := make(chan struct{}, 1)
	if err := m.Subscribe(ctx, func(state.Cue) { got <- struct{}{} }, nil, nil); err != nil {
		b.Fatal(err)
	}
	cue := state.Cue{Kind: state.CueResourceUpdated, URI: "test://bench/resource"}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := m.Publish(ctx, cue); err != nil {
			b.Fatal(err)
		}
		<-got
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}
