package redisstate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
)

// TestRedisMinReplicas: with Config.MinReplicas 1, an acknowledged
// Create, CompareAndSet and Once result is on the replica when the call
// returns; once the replica is cut off, each of them fails with
// state.ErrUnavailable (Once: ErrOnceNotStored) within its bounds, and is
// counted in Stats.NotReplicated, instead of being acknowledged and lost
// by a later failover.
func TestRedisMinReplicas(t *testing.T) {
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
	s, err := New(ctx, master.URL(), Config{MinReplicas: 1,
		// Generous: on a loaded machine an acknowledgement took over 200 ms.
		OpTimeout: 2 * time.Second, ReplicaTimeout: time.Second, OnceLease: 900 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	onReplica := func(key string) bool {
		v, err := radmin.Do(ctx, radmin.B().Get().Key(key).Build()).ToString()
		return err == nil && v != ""
	}
	h, err := s.Create(ctx, "p", []byte("v1"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !onReplica(s.recordKey("p", h)) {
		t.Fatal("an acknowledged Create is not on the replica yet")
	}
	if _, err := s.CompareAndSet(ctx, "p", h, 1, []byte("v2"), 0); err != nil {
		t.Fatal(err)
	}
	if v, err := radmin.Do(ctx, radmin.B().Get().Key(s.recordKey("p", h)).Build()).ToString(); err != nil || !strings.HasSuffix(v, "v2") {
		t.Fatalf("an acknowledged CompareAndSet is not on the replica yet: %q %v", v, err)
	}
	if _, err := s.Once(ctx, "p", "k1", time.Minute, func() ([]byte, error) { return []byte("r"), nil }); err != nil {
		t.Fatal(err)
	}
	if !onReplica(s.onceKey("p", "k1")) {
		t.Fatal("an acknowledged Once result is not on the replica yet")
	}
	if n := s.Stats().NotReplicated.Load(); n != 0 {
		t.Fatalf("NotReplicated = %d with the replica up", n)
	}

	// Cut the replica off: its user disabled, its link killed.
	must(t, madmin.Do(ctx, madmin.B().Arbitrary("ACL", "SETUSER", "repl", "off").Build()).Error())
	must(t, madmin.Do(ctx, madmin.B().Arbitrary("CLIENT", "KILL", "USER", "repl").Build()).Error())
	waitFor(t, 10*time.Second, "the replica's link to go down", func() bool {
		return infoField(rawInfo(ctx, radmin, "replication"), "master_link_status") == "down"
	})
	if _, err := s.Create(ctx, "p", []byte("x"), time.Minute); !errors.Is(err, state.ErrUnavailable) || !strings.Contains(err.Error(), "MinReplicas") {
		t.Fatalf("Create without a replica: %v, want unavailable naming MinReplicas", err)
	}
	if _, err := s.CompareAndSet(ctx, "p", h, 2, []byte("v3"), 0); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("CompareAndSet without a replica: %v, want unavailable", err)
	}
	if _, err := s.Once(ctx, "p", "k2", time.Minute, func() ([]byte, error) { return []byte("r"), nil }); !errors.Is(err, ErrOnceNotStored) {
		t.Fatalf("Once without a replica: %v, want ErrOnceNotStored", err)
	}
	if n := s.Stats().NotReplicated.Load(); n < 3 {
		t.Fatalf("NotReplicated = %d after three refused writes", n)
	}
}

// TestMinReplicasDefaults: no WAIT unless asked; ReplicaTimeout's
// default, and one not under OpTimeout cut to half of it (else WAIT would
// outlast the call's deadline: a bare "deadline exceeded").
func TestMinReplicasDefaults(t *testing.T) {
	var c Config
	c.fill()
	if c.MinReplicas != 0 || c.ReplicaTimeout != DefaultReplicaTimeout {
		t.Fatalf("defaults: MinReplicas %d, ReplicaTimeout %v", c.MinReplicas, c.ReplicaTimeout)
	}
	c = Config{ReplicaTimeout: 2 * time.Second}
	c.fill()
	if c.ReplicaTimeout != DefaultOpTimeout/2 {
		t.Fatalf("ReplicaTimeout 2s with OpTimeout %v: %v", DefaultOpTimeout, c.ReplicaTimeout)
	}
}

// BenchmarkCreateReplicated: Create on a master with one replica, without
// and with MinReplicas 1 (WAIT after each write), in the same run so that
// the ratio is what counts (profiles/redis-min-replicas.txt).
func BenchmarkCreateReplicated(b *testing.B) {
	ctx := context.Background()
	master := redistest.Start(b)
	replica := redistest.StartArgs(b, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))
	radmin := rawClient(b, replica.Addr())
	waitFor(b, 10*time.Second, "the replica to sync", func() bool {
		return infoField(rawInfo(ctx, radmin, "replication"), "master_link_status") == "up"
	})
	for _, c := range []struct {
		name string
		min  int
	}{{"async", 0}, {"wait1", 1}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(ctx, master.URL(), Config{MinReplicas: c.min})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Create(ctx, "alice", benchValue, time.Minute); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestRedisRestartWithPersistenceIsAFailover: a Redis restarted from its
// append-only file keeps the records (and the epoch key), so no loss of
// data is seen; but it may lack the last writes, so the new run_id, read
// by the first lookup that misses (no subscription here), starts
// LostWindow: that miss is state.ErrLost, counted in Stats.Failovers,
// while the persisted handle still reads back.
func TestRedisRestartWithPersistenceIsAFailover(t *testing.T) {
	ctx := context.Background()
	r := redistest.StartArgs(t, "--appendonly", "yes", "--appendfsync", "always")
	s, err := New(ctx, r.URL(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Create(ctx, "p", []byte("kept"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "p", state.NewHandle()); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a miss before the restart: %v, want not found", err)
	}
	r.Kill()
	r.Restart(t)
	var rec state.Record
	waitFor(t, 10*time.Second, "the store to read again", func() bool {
		rec, err = s.Get(ctx, "p", h)
		return err == nil
	})
	if string(rec.Value) != "kept" {
		t.Fatalf("the persisted record reads %q", rec.Value)
	}
	if _, err := s.Get(ctx, "p", state.NewHandle()); !errors.Is(err, state.ErrLost) {
		t.Fatalf("a miss after a restart from persistence: %v, want state.ErrLost", err)
	}
	st := s.Stats()
	if st.Failovers.Load() != 1 || st.Restarts.Load() != 1 || st.DataLost.Load() != 0 {
		t.Fatalf("Failovers %d, Restarts %d, DataLost %d; want 1, 1, 0", st.Failovers.Load(), st.Restarts.Load(), st.DataLost.Load())
	}
}
