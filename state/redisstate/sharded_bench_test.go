package redisstate

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
)

// BenchmarkCueRedisCPU measures what a cue costs Redis, the input of the
// capacity model (deploy/CAPACITY.md): CPU time of the redis-server
// processes per cue published, with subs subscribed replicas, on one
// Redis, on a 3-master cluster with classic PUBLISH (Shards -1: every
// node relays every cue) and with sharded pub/sub. Metrics:
// redis-µs/cue (all nodes), busiest-µs/cue (the busiest node: what
// bounds a shard). CPU is read from /proc (10 ms ticks): use
// -benchtime of a few seconds.
//
//	go test -run='^$' -bench=CueRedisCPU -benchtime=20000x ./state/redisstate/
func BenchmarkCueRedisCPU(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("no /proc")
	}
	single := redistest.Start(b)
	cluster := redistest.StartCluster(b, 3)
	for _, subs := range []int{1, 3, 9} {
		b.Run("single/subs="+strconv.Itoa(subs), func(b *testing.B) {
			benchCueCPU(b, single.URL(), []int{single.Pid()}, Config{Prefix: "b1:"}, subs)
		})
		b.Run("cluster-classic/subs="+strconv.Itoa(subs), func(b *testing.B) {
			benchCueCPU(b, cluster.URL(), cluster.Pids(), Config{Prefix: "bc:", Shards: -1}, subs)
		})
		b.Run("cluster-sharded/subs="+strconv.Itoa(subs), func(b *testing.B) {
			benchCueCPU(b, cluster.URL(), cluster.Pids(), Config{Prefix: "bs:"}, subs)
		})
		b.Run("cluster-sharded-3/subs="+strconv.Itoa(subs), func(b *testing.B) {
			benchCueCPU(b, cluster.URL(), cluster.Pids(), Config{Prefix: "bs3:", Shards: 3}, subs)
		})
	}
}

func benchCueCPU(b *testing.B, url string, pids []int, opt Config, subs int) {
	ctx := context.Background()
	open := func() *Store {
		s, err := New(ctx, url, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	var got atomic.Int64
	for range subs {
		if err := open().Subscribe(ctx, func(state.Cue) { got.Add(1) }, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	pub := open()
	uris := make([]string, 64)
	for i := range uris {
		uris[i] = "file:///bench/resource/" + strconv.Itoa(i)
	}
	before := cpuTicks(pids)
	var seq atomic.Int64
	b.ResetTimer()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			if err := pub.Publish(ctx, state.Cue{Kind: state.CueResourceUpdated, URI: uris[i%int64(len(uris))]}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	want := int64(b.N) * int64(subs)
	for deadline := time.Now().Add(30 * time.Second); got.Load() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d deliveries", got.Load(), want)
		}
	}
	b.StopTimer()
	after := cpuTicks(pids)
	var total, busiest int64
	for i := range pids {
		d := after[i] - before[i]
		total += d
		busiest = max(busiest, d)
	}
	const tick = 1e4 // µs per clock tick (USER_HZ 100)
	b.ReportMetric(float64(total)*tick/float64(b.N), "redis-µs/cue")
	b.ReportMetric(float64(busiest)*tick/float64(b.N), "busiest-µs/cue")
}

// cpuTicks returns utime+stime of each process (/proc/PID/stat).
func cpuTicks(pids []int) []int64 {
	out := make([]int64, len(pids))
	for i, pid := range pids {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		out[i] = u + s
	}
	return out
}
