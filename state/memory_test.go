package state_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/statetest"
)

// memoryFactory gives every call with the same t the same Memory: the
// replicas of one process share it.
func memoryFactory(opt state.MemoryConfig) func(t *testing.T) (state.Store, state.Backplane) {
	var mu sync.Mutex
	stores := map[*testing.T]*state.Memory{}
	return func(t *testing.T) (state.Store, state.Backplane) {
		mu.Lock()
		defer mu.Unlock()
		m := stores[t]
		if m == nil {
			m = state.NewMemory(opt)
			stores[t] = m
			t.Cleanup(func() { m.Close() })
		}
		return m, m
	}
}

func TestMemoryContract(t *testing.T) {
	statetest.Run(t, memoryFactory(state.MemoryConfig{}))
}

func TestMemorySweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := state.NewMemory(state.MemoryConfig{SweepInterval: time.Second, SweepBatch: 64}) // 2 per shard and round
		defer m.Close()
		ctx := context.Background()
		for range 1000 {
			if _, err := m.Create(ctx, "p", []byte("x"), 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Create(ctx, "p", []byte("x"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if n := m.Len(); n != 1001 {
			t.Fatalf("Len = %d, want 1001", n)
		}
		// Nobody reads: only the sweep removes them, a bounded sample per
		// tick, more rounds while most of a sample has expired.
		time.Sleep(4500 * time.Millisecond)
		synctest.Wait()
		if n := m.Len(); n != 1001 {
			t.Fatalf("Len before expiry = %d", n)
		}
		deadline := time.Now().Add(time.Minute)
		for m.Len() > 1 {
			if time.Now().After(deadline) {
				t.Fatalf("Len = %d a minute after expiry, want 1", m.Len())
			}
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if n := m.Stats().Expired.Load(); n != 1000 {
			t.Fatalf("Stats.Expired = %d, want 1000", n)
		}
		t.Logf("swept in %v", time.Since(deadline.Add(-time.Minute)))
	})
}

func TestMemoryMaxRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := state.NewMemory(state.MemoryConfig{MaxRecords: 3})
		defer m.Close()
		ctx := context.Background()
		var hs []state.Handle
		for i := range 2 {
			h, err := m.Create(ctx, "p", nil, time.Duration(i+1)*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
		}
		if _, err := m.Once(ctx, "p", "k", time.Hour, func() ([]byte, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		_, err := m.Create(ctx, "p", nil, 0)
		if !errors.Is(err, state.ErrFull) || !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("4th entry: %v; want ErrFull matching ErrUnavailable", err)
		}
		if _, err := m.Once(ctx, "p", "k2", 0, func() ([]byte, error) { return nil, nil }); !errors.Is(err, state.ErrFull) {
			t.Fatalf("Once past the limit: %v", err)
		}
		if err := m.Delete(ctx, "p", hs[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Create(ctx, "p", nil, 0); err != nil {
			t.Fatalf("after a Delete: %v", err)
		}
		time.Sleep(3 * time.Second) // hs[1] expired; a full store reclaims it when needed
		if _, err := m.Create(ctx, "p", nil, 0); err != nil {
			t.Fatalf("with an expired entry to reclaim: %v", err)
		}
		if n := m.Stats().Full.Load(); n != 2 {
			t.Fatalf("Stats.Full = %d, want 2", n)
		}
	})
}

// TestMemorySlowSubscriber: a subscriber that falls QueueLen cues behind
// is told (lost), drains, is told again (restored), then gets cues again;
// the publisher never waits and the other subscriber misses nothing.
func TestMemorySlowSubscriber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := state.NewMemory(state.MemoryConfig{QueueLen: 4})
		defer m.Close()
		ctx := context.Background()
		var mu sync.Mutex
		var events []string
		gate := make(chan struct{})
		slow := func(c state.Cue) {
			<-gate
			mu.Lock()
			events = append(events, c.URI)
			mu.Unlock()
		}
		rec := func(s string) func() {
			return func() { mu.Lock(); events = append(events, s); mu.Unlock() }
		}
		if err := m.Subscribe(ctx, slow, rec("lost"), rec("restored")); err != nil {
			t.Fatal(err)
		}
		fast := 0
		if err := m.Subscribe(ctx, func(state.Cue) { fast++ }, nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			if err := m.Publish(ctx, state.Cue{Kind: state.CueResourceUpdated, URI: u}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // the fast subscriber keeps up
		}
		close(gate)
		synctest.Wait()
		if err := m.Publish(ctx, state.Cue{Kind: state.CueResourceUpdated, URI: "h"}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mu.Lock()
		got := append([]string(nil), events...)
		mu.Unlock()
		// "a" was taken off the queue before the gate; b..e filled it; f, g dropped.
		want := []string{"a", "lost", "b", "c", "d", "e", "restored", "h"}
		if len(got) != len(want) {
			t.Fatalf("events %q, want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("events %q, want %q", got, want)
			}
		}
		if fast != 8 {
			t.Fatalf("fast subscriber got %d cues, want 8", fast)
		}
		st := m.Stats()
		if st.Dropped.Load() != 2 || st.Lost.Load() != 1 || st.Published.Load() != 8 {
			t.Fatalf("stats: dropped %d lost %d published %d", st.Dropped.Load(), st.Lost.Load(), st.Published.Load())
		}
	})
}

func TestMemoryClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := state.NewMemory(state.MemoryConfig{})
		ctx := context.Background()
		if err := m.Subscribe(ctx, func(state.Cue) {}, nil, nil); err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		onceErr := make(chan error, 1)
		go func() {
			<-started
			_, err := m.Once(ctx, "p", "k", 0, func() ([]byte, error) { return nil, nil })
			onceErr <- err
		}()
		go func() {
			_, _ = m.Once(ctx, "p", "k", 0, func() ([]byte, error) {
				close(started)
				time.Sleep(time.Hour)
				return nil, nil
			})
		}()
		synctest.Wait()
		_ = m.Close()
		_ = m.Close()
		if err := <-onceErr; !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("waiting Once at Close: %v", err)
		}
		if _, err := m.Create(ctx, "p", nil, 0); !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("Create after Close: %v", err)
		}
		if err := m.Publish(ctx, state.Cue{Kind: state.CueToolsChanged}); !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("Publish after Close: %v", err)
		}
		if err := m.Subscribe(ctx, func(state.Cue) {}, nil, nil); !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("Subscribe after Close: %v", err)
		}
		time.Sleep(2 * time.Hour) // let the sleeping fn end inside the bubble
	})
}

func TestHandle(t *testing.T) {
	seen := map[state.Handle]bool{}
	for range 1000 {
		h := state.NewHandle()
		if !h.Valid() || len(h) != 22 || seen[h] {
			t.Fatalf("handle %q: valid %v, len %d, repeat %v", h, h.Valid(), len(h), seen[h])
		}
		seen[h] = true
	}
	for i, h := range []state.Handle{"", "abc", "AAAAAAAAAAAAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAA+/"} {
		if h.Valid() {
			t.Errorf("%d: %q valid", i, h)
		}
	}
}

// Generation moves with every write of a record (CompareAndSet, Delete)
// and at Close, and not with a read: a reader that saw the same number
// before its Get and now may skip the next Get (transport/legacy does).
func TestMemoryGeneration(t *testing.T) {
	m := state.NewMemory(state.MemoryConfig{})
	defer m.Close()
	ctx := context.Background()
	h, err := m.Create(ctx, "p", []byte("a"), 0)
	if err != nil {
		t.Fatal(err)
	}
	g := m.Generation(h)
	r, err := m.Get(ctx, "p", h)
	if err != nil || m.Generation(h) != g {
		t.Fatalf("a Get moved the generation (%v)", err)
	}
	if _, err := m.CompareAndSet(ctx, "p", h, r.Version, []byte("b"), 0); err != nil {
		t.Fatal(err)
	}
	if g2 := m.Generation(h); g2 == g {
		t.Fatal("CompareAndSet did not move the generation")
	} else {
		g = g2
	}
	if err := m.Delete(ctx, "p", h); err != nil {
		t.Fatal(err)
	}
	if g2 := m.Generation(h); g2 == g {
		t.Fatal("Delete did not move the generation")
	} else {
		g = g2
	}
	_ = m.Close()
	if m.Generation(h) == g {
		t.Fatal("Close did not move the generation")
	}
}
