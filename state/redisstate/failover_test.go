package redisstate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
)

// Failover without silent loss (issue 22 item 3; RELIABILITY F9, E1): a
// master, one replica and three sentinels, every one a redis-server this
// test starts and stops by PID on loopback. Replication is asynchronous:
// a write the master acknowledged can be missing on the replica that
// Sentinel promotes. The test makes that happen for sure (it cuts the
// replica off before the last writes), kills the master with SIGKILL
// while two stores (two replicas of the server) write, and checks:
//
//   - every handle acknowledged before the cut is read back after the
//     failover, through either store;
//   - every handle acknowledged after it reads back, or fails with
//     state.ErrLost (503), never state.ErrNotFound ("unknown handle");
//   - both stores' cue subscriptions are lost (so the engine ends the
//     listen streams: CueMissed), come back, and carry cues again;
//   - every wait is bounded.
//
// With Config.MinReplicas 1 ("wait"), the writes after the cut are not
// acknowledged (WAIT), so every acknowledged handle reads back, none lost.
func TestRedisSentinelFailoverNoSilentLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five redis-server processes")
	}
	t.Run("async", func(t *testing.T) { sentinelFailover(t, 0) })
	t.Run("wait", func(t *testing.T) { sentinelFailover(t, 1) })
}

func sentinelFailover(t *testing.T, minReplicas int) {
	ctx := context.Background()
	const replPW = "repl-secret"
	master := redistest.Start(t)
	madmin := rawClient(t, master.Addr())
	must(t, madmin.Do(ctx, madmin.B().Arbitrary("ACL", "SETUSER", "repl", "on", ">"+replPW,
		"+psync", "+replconf", "+ping", "+sync").Build()).Error())
	replica := redistest.StartArgs(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()),
		"--masteruser", "repl", "--masterauth", replPW)
	radmin := rawClient(t, replica.Addr())
	waitFor(t, 10*time.Second, "the replica to sync", func() bool {
		return infoField(rawInfo(ctx, radmin, "replication"), "master_link_status") == "up"
	})
	var sentinels []*redistest.Server
	url := "redis-sentinel://"
	for i := range 3 {
		s := redistest.StartSentinel(t, redistest.SentinelConfig{MasterPort: master.Port()})
		sentinels = append(sentinels, s)
		if i == 0 {
			url += s.Addr() + "/0?master=mymaster"
		} else {
			url += "&addr=" + s.Addr()
		}
	}
	for _, s := range sentinels {
		sc := rawClient(t, s.Addr())
		waitFor(t, 20*time.Second, "each sentinel to know the replica and the other sentinels", func() bool {
			m, err := sc.Do(ctx, sc.B().Arbitrary("SENTINEL", "MASTER", "mymaster").Build()).AsStrMap()
			return err == nil && m["num-slaves"] == "1" && m["num-other-sentinels"] == "2"
		})
	}

	type replicaOf struct {
		s              *Store
		cues           chan state.Cue
		lost, restored atomic.Int32
		name           string
	}
	var reps [2]*replicaOf
	for i := range reps {
		s, err := New(ctx, url, Config{MinReplicas: minReplicas})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		r := &replicaOf{s: s, cues: make(chan state.Cue, 1024), name: fmt.Sprintf("replica %d", i)}
		must(t, s.Subscribe(ctx, func(c state.Cue) {
			select {
			case r.cues <- c:
			default:
			}
		}, func() { r.lost.Add(1) }, func() { r.restored.Add(1) }))
		reps[i] = r
	}
	cueCrosses := func(from, to *replicaOf, uri string) bool {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if err := from.s.Publish(ctx, state.Cue{Kind: state.CueResourceUpdated, URI: uri}); err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			wait := time.NewTimer(200 * time.Millisecond)
			for got := false; !got; {
				select {
				case c := <-to.cues:
					got = c.URI == uri
					if got {
						wait.Stop()
						return true
					}
				case <-wait.C:
					got = true // publish again
				}
			}
		}
		return false
	}
	if !cueCrosses(reps[0], reps[1], "file:///before") {
		t.Fatal("no cue between the replicas before the failover")
	}

	// Writers on both stores, each remembering what was acknowledged.
	type written struct {
		rep   int
		h     state.Handle
		value string
		phase string
	}
	var (
		mu    sync.Mutex
		acked []written
		phase = "replicated"
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				rep := w % 2
				v := fmt.Sprintf("w%d-%d", w, n)
				mu.Lock()
				ph := phase
				mu.Unlock()
				h, err := reps[rep].s.Create(ctx, "p", []byte(v), time.Hour)
				if err != nil {
					time.Sleep(5 * time.Millisecond) // the outage: not acknowledged, nothing promised
					continue
				}
				mu.Lock()
				acked = append(acked, written{rep, h, v, ph})
				mu.Unlock()
			}
		}()
	}
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	})
	time.Sleep(300 * time.Millisecond)

	// Everything so far reaches the replica (a write, then WAIT on the
	// same connection), then the replica is cut off: its user is
	// disabled and its link killed, so it cannot resynchronize.
	mu.Lock()
	phase = "cut"
	mu.Unlock()
	res := madmin.DoMulti(ctx, madmin.B().Set().Key("failover-test").Value("x").Build(),
		madmin.B().Wait().Numreplicas(1).Timeout(5000).Build())
	if n, err := res[1].AsInt64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	mu.Lock()
	replicated := 0
	for _, a := range acked {
		if a.phase == "replicated" {
			replicated++
		}
	}
	mu.Unlock()
	must(t, madmin.Do(ctx, madmin.B().Arbitrary("ACL", "SETUSER", "repl", "off").Build()).Error())
	must(t, madmin.Do(ctx, madmin.B().Arbitrary("CLIENT", "KILL", "USER", "repl").Build()).Error())
	waitFor(t, 10*time.Second, "the replica's link to go down", func() bool {
		return infoField(rawInfo(ctx, radmin, "replication"), "master_link_status") == "down"
	})
	// Acknowledged writes the replica never gets (writes labelled "cut"
	// may have been made before the link went down: they may be on it).
	mu.Lock()
	phase = "after-cut"
	mu.Unlock()
	var refused [2]uint64
	for i, rep := range reps {
		refused[i] = rep.s.Stats().NotReplicated.Load()
	}
	waitFor(t, 10*time.Second, "writes after the cut", func() bool {
		if minReplicas > 0 { // refused: not on the replica
			return reps[0].s.Stats().NotReplicated.Load() > refused[0] && reps[1].s.Stats().NotReplicated.Load() > refused[1]
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, a := range acked {
			if a.phase == "after-cut" {
				n++
			}
		}
		return n >= 20
	})

	// SIGKILL the master under load; wait for the writers to succeed
	// again, through the promoted replica, on both stores.
	mu.Lock()
	phase = "failover"
	mu.Unlock()
	killed := time.Now()
	master.Kill()
	waitFor(t, 30*time.Second, "both stores to write again after the failover", func() bool {
		if minReplicas > 0 {
			// The promoted master has no replica: writes reach it and
			// are refused as not replicated.
			for _, rep := range reps {
				if _, err := rep.s.Create(ctx, "p", []byte("probe"), time.Minute); err == nil || !strings.Contains(err.Error(), "MinReplicas") {
					return false
				}
			}
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		var ok [2]bool
		for _, a := range acked[len(acked)-min(len(acked), 200):] {
			if a.phase == "failover" {
				ok[a.rep] = true
			}
		}
		return ok[0] && ok[1]
	})
	t.Logf("writes again %v after the SIGKILL", time.Since(killed).Round(time.Millisecond))
	close(stop)
	wg.Wait()
	// (Sentinel drops the promoted server's clients: radmin reconnects.)
	waitFor(t, 5*time.Second, "the replica to be the master", func() bool {
		return infoField(rawInfo(ctx, radmin, "replication"), "role") == "master"
	})

	// Read every acknowledged handle through both stores.
	get := func(s *Store, h state.Handle) (state.Record, error) {
		var r state.Record
		var err error
		for range 20 { // a pooled connection may still be the dead master's: unavailable, tried again
			if r, err = s.Get(ctx, "p", h); err == nil || errors.Is(err, state.ErrLost) || !errors.Is(err, state.ErrUnavailable) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		return r, err
	}
	count := map[string]int{}
	for _, a := range acked {
		for _, rep := range reps {
			r, err := get(rep.s, a.h)
			switch {
			case err == nil:
				if string(r.Value) != a.value {
					t.Fatalf("%s: handle %s written as %q reads %q", rep.name, a.h, a.value, r.Value)
				}
				count[a.phase+" read"]++
			case errors.Is(err, state.ErrLost):
				if a.phase == "replicated" || minReplicas > 0 {
					t.Fatalf("%s: handle %s, replicated before the failover, reads as lost", rep.name, a.h)
				}
				count[a.phase+" lost"]++
			case errors.Is(err, state.ErrNotFound):
				t.Fatalf("%s: handle %s (%s, acknowledged by replica %d) is unknown after the failover: a silent loss", rep.name, a.h, a.phase, a.rep)
			default:
				t.Fatalf("%s: handle %s: %v", rep.name, a.h, err)
			}
		}
	}
	t.Logf("acknowledged and checked through both stores: %v (replicated before the cut: %d)", count, replicated)
	if count["replicated read"] < 2*replicated || replicated == 0 {
		t.Fatalf("replicated handles read back: %d of %d", count["replicated read"], 2*replicated)
	}
	if count["after-cut read"] > 0 {
		t.Fatalf("%d writes made after the replica was cut off read back: it was not cut off", count["after-cut read"])
	}
	if count["after-cut lost"] == 0 && minReplicas == 0 {
		t.Fatal("no write acknowledged after the cut was reported lost: the test did not lose any")
	}
	for _, rep := range reps {
		if n := rep.s.Stats().Failovers.Load(); n == 0 {
			t.Errorf("%s: Stats.Failovers = 0", rep.name)
		}
	}

	// The subscriptions were lost (the engine ends listen streams with
	// CueMissed, so clients re-listen), are back, and carry cues.
	for _, rep := range reps {
		waitFor(t, 15*time.Second, rep.name+"'s subscription to come back", func() bool {
			return rep.lost.Load() > 0 && rep.restored.Load() > 0
		})
	}
	if !cueCrosses(reps[0], reps[1], "file:///after-0") || !cueCrosses(reps[1], reps[0], "file:///after-1") {
		t.Fatal("no cue between the replicas after the failover")
	}
}

// rawClient is a plain client to one server (no Sentinel, no cluster).
func rawClient(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true,
		ForceSingleClient: true, Dialer: net.Dialer{Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func rawInfo(ctx context.Context, c rueidis.Client, section string) string {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	s, _ := c.Do(cctx, c.B().Info().Section(section).Build()).ToString()
	return s
}

// waitFor polls cond every 20 ms until it holds, failing tb after d.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
