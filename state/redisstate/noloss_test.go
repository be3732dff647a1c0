package redisstate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/mcpwire/mcpwire/state"
)

// Issue 20 item 4, RELIABILITY F9: no silent loss.

func newMini(t *testing.T, opt Config) (*miniredis.Miniredis, *Store) {
	t.Helper()
	m := miniredis.RunT(t)
	s, err := New(context.Background(), "redis://"+m.Addr(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestOnceNotStored: a call whose result cannot be stored (Redis fails
// after fn ran, until the lease is over) is answered unavailable, not with
// the result, so the client retries instead of believing it done while a
// re-send would run it again (F9).
func TestOnceNotStored(t *testing.T) {
	m, s := newMini(t, Config{OnceLease: 300 * time.Millisecond, OpTimeout: 100 * time.Millisecond})
	v, err := s.Once(context.Background(), "alice", "k", time.Minute, func() ([]byte, error) {
		m.SetError("LOADING Redis is loading the dataset in memory")
		return []byte("r"), nil
	})
	m.SetError("")
	if !errors.Is(err, ErrOnceNotStored) || !errors.Is(err, state.ErrUnavailable) || v != nil {
		t.Fatalf("Once whose result was not stored = %q, %v; want ErrOnceNotStored (unavailable)", v, err)
	}
	if n := s.Stats().OnceNotStored.Load(); n != 1 {
		t.Fatalf("Stats.OnceNotStored = %d, want 1", n)
	}
}

// TestOnceStoredAfterRetry: a result whose first store fails is stored by
// a later attempt while the lease lasts: the caller gets it, and a re-sent
// call gets the same result without running the function again (E4, F9).
func TestOnceStoredAfterRetry(t *testing.T) {
	m, s := newMini(t, Config{OnceLease: 3 * time.Second, OpTimeout: 100 * time.Millisecond})
	var runs atomic.Int32
	fn := func() ([]byte, error) {
		if runs.Add(1) == 1 {
			m.SetError("LOADING Redis is loading the dataset in memory")
			time.AfterFunc(150*time.Millisecond, func() { m.SetError("") })
		}
		return []byte("r"), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	v, err := s.Once(ctx, "alice", "k", time.Minute, fn)
	if err != nil || string(v) != "r" {
		t.Fatalf("Once = %q, %v", v, err)
	}
	v, err = s.Once(ctx, "alice", "k", time.Minute, fn)
	if err != nil || string(v) != "r" || runs.Load() != 1 {
		t.Fatalf("re-sent Once = %q, %v after %d runs; want the stored result, 1 run", v, err, runs.Load())
	}
}

// TestOnceLeaseTaken: a call whose key was taken by another caller while
// it ran (its lease expired) is flagged, counted, and answered unavailable
// rather than silently (F9).
func TestOnceLeaseTaken(t *testing.T) {
	m, s := newMini(t, Config{})
	k := s.onceKey("alice", "k")
	v, err := s.Once(context.Background(), "alice", "k", time.Minute, func() ([]byte, error) {
		m.Set(k, "p"+strings.Repeat("ab", 16)) // another replica's lease
		return []byte("r"), nil
	})
	if !errors.Is(err, ErrOnceLeaseLost) || !errors.Is(err, state.ErrUnavailable) || v != nil {
		t.Fatalf("Once whose lease was taken = %q, %v; want ErrOnceLeaseLost", v, err)
	}
	if n := s.Stats().OnceLeaseLost.Load(); n != 1 {
		t.Fatalf("Stats.OnceLeaseLost = %d, want 1", n)
	}
}

// TestOnceFinishRetried: a finish that went through but whose reply was
// lost is retried; the retry finds the key holding exactly the result it
// stores, which is success, not a lease taken by another caller (no false
// ErrOnceLeaseLost, nothing counted or logged).
func TestOnceFinishRetried(t *testing.T) {
	m, s := newMini(t, Config{})
	k := s.onceKey("alice", "k")
	token := string(tagPending) + newToken()
	if err := m.Set(k, token); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the first finish's reply "lost", then the retry
		if n, err := s.finishOnce(context.Background(), k, token, "dr", 60000); err != nil || n != 1 {
			t.Fatalf("finish %d = %d, %v; want 1 (stored)", i+1, n, err)
		}
	}
	if n, err := s.finishOnce(context.Background(), k, token, "dother", 60000); err != nil || n != 0 {
		t.Fatalf("finish of another result = %d, %v; want 0 (not ours)", n, err)
	}
	// Through Once: the key holds the call's result when it stores it.
	k2 := s.onceKey("alice", "k2")
	v, err := s.Once(context.Background(), "alice", "k2", time.Minute, func() ([]byte, error) {
		m.Set(k2, "dr") // as stored by an attempt whose reply was lost
		return []byte("r"), nil
	})
	if err != nil || string(v) != "r" {
		t.Fatalf("Once = %q, %v; want the result", v, err)
	}
	if n := s.Stats().OnceLeaseLost.Load(); n != 0 {
		t.Fatalf("Stats.OnceLeaseLost = %d, want 0", n)
	}
}

// TestOnceRenewalFails: renewals failing past OnceLease are counted and
// logged while the call still runs.
func TestOnceRenewalFails(t *testing.T) {
	var logs syncBuf
	m, s := newMini(t, Config{OnceLease: 150 * time.Millisecond, OpTimeout: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	_, _ = s.Once(context.Background(), "alice", "k", time.Minute, func() ([]byte, error) {
		m.SetError("LOADING Redis is loading the dataset in memory")
		deadline := time.Now().Add(5 * time.Second)
		for s.Stats().OnceLeaseLost.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		m.SetError("")
		return []byte("r"), nil
	})
	if n := s.Stats().OnceLeaseLost.Load(); n != 1 {
		t.Fatalf("Stats.OnceLeaseLost = %d, want 1", n)
	}
	if !strings.Contains(logs.String(), "lost its lease") {
		t.Fatalf("no warning logged: %q", logs.String())
	}
}

// TestOnceMalformed: a Once key holding something this package did not
// write is an error at once, not a wait for a lease that never ends.
func TestOnceMalformed(t *testing.T) {
	m, s := newMini(t, Config{})
	m.Set(s.onceKey("alice", "k"), "zzz")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	ran := false
	_, err := s.Once(ctx, "alice", "k", time.Minute, func() ([]byte, error) { ran = true; return nil, nil })
	if !errors.Is(err, errOnceMalformed) || ran {
		t.Fatalf("Once on a malformed key: %v (ran %v)", err, ran)
	}
}

func TestParseOnce(t *testing.T) {
	tok := strings.Repeat("0f", 16)
	for i, tc := range []struct {
		in   string
		tag  byte
		rest string
		ok   bool
	}{
		{"d", tagDone, "", true},
		{"dresult", tagDone, "result", true},
		{"x", tagTooLarge, "", true},
		{"p" + tok, tagPending, tok, true},
		{"", 0, "", false},
		{"xy", 0, "", false},
		{"p", 0, "", false},
		{"p" + tok + "0", 0, "", false},
		{"p" + strings.ToUpper(tok), 0, "", false},
		{"q", 0, "", false},
	} {
		tag, rest, ok := parseOnce([]byte(tc.in))
		if ok != tc.ok || tag != tc.tag || string(rest) != tc.rest {
			t.Errorf("%d: parseOnce(%q) = %q, %q, %v", i, tc.in, tag, rest, ok)
		}
	}
}

// TestRedisRestartDetected: a Redis restart without persistence is
// detected when the subscription comes back (run_id and the epoch key
// changed), counted and logged; for LostWindow a lookup that misses is
// state.ErrLost (HTTP 503), not "unknown handle", and a Once whose key
// vanished does not run again (F9).
func TestRedisRestartDetected(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	var logs syncBuf
	s, err := New(ctx, r.URL(), Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lost, restored := make(chan struct{}, 4), make(chan struct{}, 4)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.Subscribe(sctx, func(state.Cue) {}, func() { lost <- struct{}{} }, func() { restored <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	h, err := s.Create(ctx, "alice", []byte("x"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Once(ctx, "alice", "once", time.Minute, func() ([]byte, error) { return []byte("1"), nil }); err != nil {
		t.Fatal(err)
	}
	r.Kill()
	r.Restart(t)
	select {
	case <-restored:
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not restored within 10s of the restart")
	}
	if len(lost) != 1 { // listen streams were ended, as in an outage
		t.Fatalf("lost called %d times for one restart", len(lost))
	}
	if n, l := s.Stats().Restarts.Load(), s.Stats().DataLost.Load(); n != 1 || l != 1 {
		t.Fatalf("Stats.Restarts = %d, DataLost = %d; want 1, 1", n, l)
	}
	if !strings.Contains(logs.String(), "restarted") || !strings.Contains(logs.String(), "lost the shared state") {
		t.Fatalf("restart not logged: %q", logs.String())
	}
	// A pooled connection may still be the dead one: a call that fails
	// with a plain unavailable error is tried again, as a client would.
	retry := func(f func() error) error {
		var err error
		for range 5 {
			if err = f(); err == nil || errors.Is(err, state.ErrLost) || !errors.Is(err, state.ErrUnavailable) {
				return err
			}
			time.Sleep(50 * time.Millisecond)
		}
		return err
	}
	if err := retry(func() error { _, err := s.Get(ctx, "alice", h); return err }); !errors.Is(err, state.ErrLost) || !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Get of a handle lost in the restart: %v; want ErrLost", err)
	}
	if err := retry(func() error { _, err := s.CompareAndSet(ctx, "alice", h, 1, []byte("y"), 0); return err }); !errors.Is(err, state.ErrLost) {
		t.Fatalf("CompareAndSet of a handle lost in the restart: %v; want ErrLost", err)
	}
	ran := false
	if err := retry(func() error {
		_, err := s.Once(ctx, "alice", "once", time.Minute, func() ([]byte, error) { ran = true; return nil, nil })
		return err
	}); !errors.Is(err, state.ErrLost) || ran {
		t.Fatalf("Once whose key was lost: %v (ran %v); want ErrLost, not run", err, ran)
	}
	// A second replica started after the restart sees the same data: no loss.
	s2, err := New(ctx, r.URL(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := retry(func() error { _, err := s2.Get(ctx, "alice", h); return err }); !errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrLost) {
		t.Fatalf("a replica started after the loss: Get = %v, want ErrNotFound", err)
	}
}

// TestEvictionPolicyWarned: a Redis whose maxmemory-policy can evict the
// store's keys is a loud warning at New and the EvictionRisk gauge.
func TestEvictionPolicyWarned(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	for _, tc := range []struct {
		policy string
		risk   int64
	}{{"noeviction", 0}, {"allkeys-lru", 1}, {"volatile-ttl", 1}} {
		admin, err := New(ctx, r.URL(), Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.c.Do(ctx, admin.c.B().ConfigSet().ParameterValue().ParameterValue("maxmemory-policy", tc.policy).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		admin.Close()
		var logs syncBuf
		s, err := New(ctx, r.URL(), Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		risk := s.Stats().EvictionRisk.Load()
		s.Close()
		if warned := strings.Contains(logs.String(), "maxmemory-policy"); risk != tc.risk || warned != (tc.risk == 1) {
			t.Errorf("%s: EvictionRisk = %d, warned %v: %q", tc.policy, risk, warned, logs.String())
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestDataLossWindows: a flush (no restart) is detected as lost data by
// the epoch key; lookups that miss are ErrLost within LostWindow, Once
// refuses within OnceLostWindow, and a negative window keeps plain
// "not found" / runs the call.
func TestDataLossWindows(t *testing.T) {
	m := miniredis.RunT(t)
	ctx := context.Background()
	open := func(opt Config) *Store {
		s, err := New(ctx, "redis://"+m.Addr(), opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	on, off := open(Config{}), open(Config{LostWindow: -1, OnceLostWindow: -1})
	h, err := on.Create(ctx, "alice", []byte("x"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	m.FlushAll()
	on.checkRestart(ctx)
	off.checkRestart(ctx)
	for i, s := range []*Store{on, off} {
		if n := s.Stats().DataLost.Load(); n != 1 {
			t.Fatalf("%d: DataLost = %d after a flush", i, n)
		}
	}
	if _, err := on.Get(ctx, "alice", h); !errors.Is(err, state.ErrLost) {
		t.Fatalf("Get within LostWindow: %v", err)
	}
	if _, err := off.Get(ctx, "alice", h); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Get with LostWindow < 0: %v", err)
	}
	if _, err := on.Once(ctx, "alice", "k", time.Minute, func() ([]byte, error) { return []byte("1"), nil }); !errors.Is(err, state.ErrLost) {
		t.Fatalf("Once within OnceLostWindow: %v", err)
	}
	if v, err := off.Once(ctx, "alice", "k", time.Minute, func() ([]byte, error) { return []byte("1"), nil }); err != nil || string(v) != "1" {
		t.Fatalf("Once with OnceLostWindow < 0: %q %v", v, err)
	}
	// A Once whose ttl is shorter than the time since the loss could not
	// have been remembered: it runs.
	time.Sleep(20 * time.Millisecond)
	if v, err := on.Once(ctx, "alice", "short", 10*time.Millisecond, func() ([]byte, error) { return []byte("2"), nil }); err != nil || string(v) != "2" {
		t.Fatalf("Once with a ttl shorter than the time since the loss: %q %v", v, err)
	}
}

// TestFlushDetectedOnMiss: a flush (or an eviction) drops no connection,
// so nothing but the lookup itself can notice it: a Get, CompareAndSet or
// Once that misses reads the epoch key, finds it gone, and answers
// state.ErrLost (HTTP 503), not "unknown handle" or a second run, counted
// in DataLost (once: the next miss reads the new epoch) and LostMisses
// (F9).
func TestFlushDetectedOnMiss(t *testing.T) {
	m, s := newMini(t, Config{LossCheckInterval: -1})
	ctx := context.Background()
	h, err := s.Create(ctx, "alice", []byte("x"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	m.FlushAll()
	if _, err := s.Get(ctx, "alice", h); !errors.Is(err, state.ErrLost) || !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Get of a flushed handle: %v; want ErrLost", err)
	}
	if _, err := s.CompareAndSet(ctx, "alice", h, 1, []byte("y"), 0); !errors.Is(err, state.ErrLost) {
		t.Fatalf("CompareAndSet of a flushed handle: %v; want ErrLost", err)
	}
	st := s.Stats()
	if d, l := st.DataLost.Load(), st.LostMisses.Load(); d != 1 || l != 2 {
		t.Fatalf("DataLost = %d, LostMisses = %d; want 1, 2", d, l)
	}
}

// TestOnceFlushDetectedOnMiss: a Once whose key vanished in a flush does
// not run again: its miss finds the epoch key gone (F9).
func TestOnceFlushDetectedOnMiss(t *testing.T) {
	m, s := newMini(t, Config{LossCheckInterval: -1})
	ctx := context.Background()
	if _, err := s.Once(ctx, "alice", "k", time.Minute, func() ([]byte, error) { return []byte("1"), nil }); err != nil {
		t.Fatal(err)
	}
	m.FlushAll()
	ran := false
	if _, err := s.Once(ctx, "alice", "k", time.Minute, func() ([]byte, error) { ran = true; return nil, nil }); !errors.Is(err, state.ErrLost) || ran {
		t.Fatalf("Once whose key was flushed: %v (ran %v); want ErrLost, not run", err, ran)
	}
	if n := s.Stats().DataLost.Load(); n != 1 {
		t.Fatalf("DataLost = %d, want 1", n)
	}
}

// TestFlushDetectedPeriodically: while subscribed, a store reads the
// epoch key every LossCheckInterval, so a flush is counted and logged
// although no lookup missed and no connection dropped.
func TestFlushDetectedPeriodically(t *testing.T) {
	m, s := newMini(t, Config{LossCheckInterval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Subscribe(ctx, func(state.Cue) {}, nil, nil); err != nil {
		t.Fatal(err)
	}
	m.FlushAll()
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().DataLost.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.Stats().DataLost.Load(); n != 1 {
		t.Fatalf("DataLost = %d after a flush while subscribed, want 1", n)
	}
	if s.Stats().LostMisses.Load() != 0 {
		t.Fatal("a miss counted without a lookup")
	}
}
