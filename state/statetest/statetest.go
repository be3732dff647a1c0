// Package statetest holds the contract tests every state.Store and
// state.Backplane implementation passes (issue 11; RELIABILITY E1, E3,
// E4).
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/state"
)

// Factory returns one more replica's view of the shared engine under
// test: every call with the same t must reach the same records and the
// same backplane (two calls are two replicas), and the factory closes what
// it returns when t ends. The store must use the default value limit
// (state.DefaultMaxValueBytes).
type Factory func(t *testing.T) (state.Store, state.Backplane)

// Run runs the contract tests, each as a subtest with its own t.
func Run(t *testing.T, newStore func(t *testing.T) (state.Store, state.Backplane)) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, Factory)
	}{
		{"CreateGetCASDelete", testLifecycle},
		{"Values", testValues},
		{"OtherPrincipal", testOtherPrincipal},
		{"GuessedHandle", testGuessed},
		{"TTL", testTTL},
		{"TooLarge", testTooLarge},
		{"OnceConcurrent", testOnceConcurrent},
		{"OnceFailureNotRemembered", testOnceFailure},
		{"Backplane", testBackplane},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, newStore) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testLifecycle(t *testing.T, newStore Factory) {
	s, _ := newStore(t)
	ctx := ctxT(t)
	h, err := s.Create(ctx, "alice", []byte("one"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Valid() {
		t.Fatalf("handle %q does not have the NewHandle shape", h)
	}
	r, err := s.Get(ctx, "alice", h)
	if err != nil || string(r.Value) != "one" || r.Version != 1 {
		t.Fatalf("Get = %q v%d, %v; want \"one\" v1", r.Value, r.Version, err)
	}
	if d := time.Until(r.Expires); d <= 0 || d > time.Minute+time.Second {
		t.Fatalf("Expires in %v, want about 1m", d)
	}
	v, err := s.CompareAndSet(ctx, "alice", h, 1, []byte("two"), 0)
	if err != nil || v != 2 {
		t.Fatalf("CAS v1 = %d, %v; want 2", v, err)
	}
	if _, err := s.CompareAndSet(ctx, "alice", h, 1, []byte("stale"), 0); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("stale CAS: %v, want ErrConflict", err)
	}
	r2, err := s.Get(ctx, "alice", h)
	if err != nil || string(r2.Value) != "two" || r2.Version != 2 {
		t.Fatalf("Get after CAS = %q v%d, %v", r2.Value, r2.Version, err)
	}
	if d := r2.Expires.Sub(r.Expires); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("CAS with ttl 0 moved the expiry by %v", d)
	}
	if v, err := s.CompareAndSet(ctx, "alice", h, 2, []byte("three"), 2*time.Hour); err != nil || v != 3 {
		t.Fatalf("CAS v2 = %d, %v", v, err)
	}
	r3, _ := s.Get(ctx, "alice", h)
	if d := time.Until(r3.Expires); d < time.Hour {
		t.Fatalf("CAS with ttl 2h: expires in %v", d)
	}
	// Another replica sees the same record.
	s2, _ := newStore(t)
	if r, err := s2.Get(ctx, "alice", h); err != nil || string(r.Value) != "three" || r.Version != 3 {
		t.Fatalf("second replica Get = %q v%d, %v", r.Value, r.Version, err)
	}
	if err := s2.Delete(ctx, "alice", h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "alice", h); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	if _, err := s.CompareAndSet(ctx, "alice", h, 3, []byte("x"), 0); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("CAS after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "alice", h); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if _, err := s.Create(ctx, "alice", []byte("x"), -time.Second); err == nil {
		t.Fatal("Create with a negative ttl succeeded")
	}
}

func testValues(t *testing.T, newStore Factory) {
	s, _ := newStore(t)
	ctx := ctxT(t)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for i, v := range [][]byte{nil, {}, all, bytes.Repeat([]byte("z"), state.DefaultMaxValueBytes)} {
		h, err := s.Create(ctx, "p", v, 0)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		r, err := s.Get(ctx, "p", h)
		if err != nil || !bytes.Equal(r.Value, v) {
			t.Fatalf("%d: Get = %d bytes, %v; want %d bytes", i, len(r.Value), err, len(v))
		}
		if !r.Expires.IsZero() && !r.Expires.After(time.Now()) {
			t.Fatalf("%d: default ttl: expires %v, already past", i, r.Expires)
		}
	}
	// Handles are distinct.
	seen := map[state.Handle]bool{}
	for range 100 {
		h, err := s.Create(ctx, "p", nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if seen[h] {
			t.Fatalf("handle %q issued twice", h)
		}
		seen[h] = true
	}
}

func testOtherPrincipal(t *testing.T, newStore Factory) {
	s, _ := newStore(t)
	s2, _ := newStore(t)
	ctx := ctxT(t)
	h, err := s.Create(ctx, "alice", []byte("secret"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []state.Store{s, s2} {
		for _, p := range []string{"bob", "", "alice ", "ALICE"} {
			if r, err := st.Get(ctx, p, h); !errors.Is(err, state.ErrNotFound) || r.Value != nil {
				t.Fatalf("replica %d: Get as %q = %q, %v; want ErrNotFound", i, p, r.Value, err)
			}
			if _, err := st.CompareAndSet(ctx, p, h, 1, []byte("mine"), 0); !errors.Is(err, state.ErrNotFound) {
				t.Fatalf("replica %d: CAS as %q: %v; want ErrNotFound", i, p, err)
			}
			if err := st.Delete(ctx, p, h); err != nil {
				t.Fatalf("replica %d: Delete as %q: %v", i, p, err)
			}
		}
	}
	if r, err := s2.Get(ctx, "alice", h); err != nil || string(r.Value) != "secret" || r.Version != 1 {
		t.Fatalf("owner's record changed by others: %q v%d, %v", r.Value, r.Version, err)
	}
}

func testGuessed(t *testing.T, newStore Factory) {
	s, _ := newStore(t)
	ctx := ctxT(t)
	h, err := s.Create(ctx, "alice", []byte("x"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range []state.Handle{
		state.NewHandle(), "", "x", h + "A", h[1:], state.Handle(strings.ToUpper(string(h))) + "~",
		"../../etc/passwd", "*", state.Handle(strings.Repeat("A", 1<<16)), h[:len(h)-1] + "\x00",
	} {
		if g == h {
			continue
		}
		if _, err := s.Get(ctx, "alice", g); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("%d: Get %.30q: %v; want ErrNotFound", i, g, err)
		}
		if _, err := s.CompareAndSet(ctx, "alice", g, 1, nil, 0); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("%d: CAS %.30q: %v; want ErrNotFound", i, g, err)
		}
		if err := s.Delete(ctx, "alice", g); err != nil {
			t.Fatalf("%d: Delete %.30q: %v", i, g, err)
		}
	}
}

func testTTL(t *testing.T, newStore Factory) {
	s, _ := newStore(t)
	ctx := ctxT(t)
	const ttl = 200 * time.Millisecond
	start := time.Now()
	h, err := s.Create(ctx, "alice", []byte("short"), ttl)
	if err != nil {
		t.Fatal(err)
	}
	long, err := s.Create(ctx, "alice", []byte("long"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := s.Get(ctx, "alice", h)
		if errors.Is(err, state.ErrNotFound) {
			if e := time.Since(start); e < ttl-20*time.Millisecond {
				t.Fatalf("expired after %v, ttl %v", e, ttl)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("record with ttl %v still there after 5s", ttl)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.CompareAndSet(ctx, "alice", h, 1, nil, 0); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("CAS on an expired record: %v", err)
	}
	if _, err := s.Get(ctx, "alice", long); err != nil {
		t.Fatalf("record with ttl 1m: %v", err)
	}
	// A CAS that sets a short ttl shortens the life.
	if _, err := s.CompareAndSet(ctx, "alice", long, 1, []byte("soon"), ttl); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.Get(ctx, "alice", long); errors.Is(err, state.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("record whose ttl a CAS shortened did not expire")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testTooLarge(t *testing.T, newStore Factory) {
	s, _ := newStore(t)
	ctx := ctxT(t)
	big := make([]byte, state.DefaultMaxValueBytes+1)
	if _, err := s.Create(ctx, "alice", big, 0); !errors.Is(err, state.ErrTooLarge) {
		t.Fatalf("Create %d bytes: %v; want ErrTooLarge", len(big), err)
	}
	h, err := s.Create(ctx, "alice", []byte("small"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSet(ctx, "alice", h, 1, big, 0); !errors.Is(err, state.ErrTooLarge) {
		t.Fatalf("CAS %d bytes: %v; want ErrTooLarge", len(big), err)
	}
	if r, err := s.Get(ctx, "alice", h); err != nil || string(r.Value) != "small" || r.Version != 1 {
		t.Fatalf("record after a refused CAS: %q v%d, %v", r.Value, r.Version, err)
	}
	_, err = s.Once(ctx, "alice", "big-result", time.Minute, func() ([]byte, error) { return big, nil })
	if !errors.Is(err, state.ErrTooLarge) {
		t.Fatalf("Once with a %d-byte result: %v; want ErrTooLarge", len(big), err)
	}
	ran := false
	_, err = s.Once(ctx, "alice", "big-result", time.Minute, func() ([]byte, error) { ran = true; return nil, nil })
	if ran || !errors.Is(err, state.ErrTooLarge) {
		t.Fatalf("Once again after a too-large result: ran=%v, %v; want not run, ErrTooLarge", ran, err)
	}
}

// testOnceConcurrent: the same idempotency key through two replicas at
// once is applied once (E4); another principal's key is its own.
func testOnceConcurrent(t *testing.T, newStore Factory) {
	a, _ := newStore(t)
	b, _ := newStore(t)
	ctx := ctxT(t)
	key := fmt.Sprintf("call-%d", time.Now().UnixNano())
	var runs atomic.Int32
	fn := func() ([]byte, error) {
		n := runs.Add(1)
		time.Sleep(50 * time.Millisecond)
		return fmt.Appendf(nil, "result-%d", n), nil
	}
	const callers = 16
	var wg sync.WaitGroup
	results := make([][]byte, callers)
	errs := make([]error, callers)
	for i := range callers {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Go(func() { results[i], errs[i] = st.Once(ctx, "alice", key, time.Minute, fn) })
	}
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("fn ran %d times, want 1", n)
	}
	for i := range callers {
		if errs[i] != nil || string(results[i]) != "result-1" {
			t.Fatalf("caller %d: %q, %v", i, results[i], errs[i])
		}
	}
	// Later re-sends get the remembered result.
	if r, err := b.Once(ctx, "alice", key, time.Minute, fn); err != nil || string(r) != "result-1" || runs.Load() != 1 {
		t.Fatalf("re-send: %q, %v, runs %d", r, err, runs.Load())
	}
	// Another principal with the same key is a different call.
	if r, err := a.Once(ctx, "bob", key, time.Minute, fn); err != nil || string(r) != "result-2" {
		t.Fatalf("bob: %q, %v", r, err)
	}
	// The remembered result expires with its ttl.
	k2 := key + "-short"
	if _, err := a.Once(ctx, "alice", k2, 150*time.Millisecond, fn); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for before := runs.Load(); ; {
		if _, err := b.Once(ctx, "alice", k2, 150*time.Millisecond, fn); err != nil {
			t.Fatal(err)
		}
		if runs.Load() > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Once result with ttl 150ms still remembered after 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testOnceFailure(t *testing.T, newStore Factory) {
	a, _ := newStore(t)
	b, _ := newStore(t)
	ctx := ctxT(t)
	key := fmt.Sprintf("fail-%d", time.Now().UnixNano())
	boom := errors.New("boom")
	if _, err := a.Once(ctx, "alice", key, time.Minute, func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing fn: %v, want its error", err)
	}
	r, err := b.Once(ctx, "alice", key, time.Minute, func() ([]byte, error) { return []byte("ok"), nil })
	if err != nil || string(r) != "ok" {
		t.Fatalf("after a failure: %q, %v; want fn to run", r, err)
	}
	// A caller waiting on a failing first caller runs its own fn.
	key2 := key + "-wait"
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = a.Once(ctx, "alice", key2, time.Minute, func() ([]byte, error) {
			close(started)
			time.Sleep(100 * time.Millisecond)
			return nil, boom
		})
	})
	<-started
	r, err = b.Once(ctx, "alice", key2, time.Minute, func() ([]byte, error) { return []byte("second"), nil })
	wg.Wait()
	if err != nil || string(r) != "second" {
		t.Fatalf("waiter after a failure: %q, %v", r, err)
	}
	// A waiter gives up with its context.
	key3 := key + "-ctx"
	started3 := make(chan struct{})
	release := make(chan struct{})
	wg.Go(func() {
		_, _ = a.Once(ctx, "alice", key3, time.Minute, func() ([]byte, error) {
			close(started3)
			<-release
			return []byte("late"), nil
		})
	})
	<-started3
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	t0 := time.Now()
	_, err = b.Once(wctx, "alice", key3, time.Minute, func() ([]byte, error) { return []byte("dup"), nil })
	cancel()
	close(release)
	wg.Wait()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 2*time.Second {
		t.Fatalf("waiter with a 100ms context: %v after %v", err, time.Since(t0))
	}
}

// testBackplane: two replicas subscribe and both publish; each subscriber
// gets every cue once, in order per publisher.
func testBackplane(t *testing.T, newStore Factory) {
	_, bpA := newStore(t)
	_, bpB := newStore(t)
	ctx := ctxT(t)
	type sink struct {
		mu   sync.Mutex
		got  []state.Cue
		lost atomic.Int32
	}
	sinks := []*sink{{}, {}}
	for i, bp := range []state.Backplane{bpA, bpB} {
		k := sinks[i]
		err := bp.Subscribe(ctx, func(c state.Cue) {
			k.mu.Lock()
			k.got = append(k.got, c)
			k.mu.Unlock()
		}, func() { k.lost.Add(1) }, nil)
		if err != nil {
			t.Fatalf("Subscribe %d: %v", i, err)
		}
	}
	const per = 200
	var wg sync.WaitGroup
	for p, bp := range []state.Backplane{bpA, bpB} {
		wg.Go(func() {
			for i := range per {
				c := state.Cue{Kind: state.CueResourceUpdated, URI: fmt.Sprintf("test://%d/%d", p, i)}
				if i%50 == 0 {
					c = state.Cue{Kind: state.CueKind(1 + i/50%3)}
				}
				if err := bp.Publish(ctx, c); err != nil {
					t.Errorf("publisher %d: %v", p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for i, k := range sinks {
		for {
			k.mu.Lock()
			n := len(k.got)
			k.mu.Unlock()
			if n >= 2*per || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // room for a duplicate to show
		k.mu.Lock()
		got := append([]state.Cue(nil), k.got...)
		k.mu.Unlock()
		if len(got) != 2*per || k.lost.Load() != 0 {
			t.Fatalf("subscriber %d: %d cues (lost %d), want %d", i, len(got), k.lost.Load(), 2*per)
		}
		next := [2]int{}
		for _, c := range got {
			var p, n int
			if c.Kind == state.CueResourceUpdated {
				if _, err := fmt.Sscanf(c.URI, "test://%d/%d", &p, &n); err != nil {
					t.Fatalf("subscriber %d: bad cue %+v", i, c)
				}
			} else {
				// list_changed cues carry no publisher; they come at i%50==0
				continue
			}
			if n < next[p] {
				t.Fatalf("subscriber %d: publisher %d's cue %d after %d (order or duplicate)", i, p, n, next[p])
			}
			next[p] = n + 1
		}
	}
}

// Outage is what RunOutage needs to take the shared engine away and bring
// it back.
type Outage struct {
	Stop, Start func(t *testing.T)
}

// RunOutage checks E1 on an engine that can be stopped: while it is down
// every call fails with state.ErrUnavailable within 2 s and subscribers
// are told (lost); once it is back they are told again (restored) and
// records and cues work again.
func RunOutage(t *testing.T, newStore Factory, o Outage) {
	s, bp := newStore(t)
	ctx := ctxT(t)
	lost := make(chan struct{}, 16)
	restored := make(chan struct{}, 16)
	cues := make(chan state.Cue, 64)
	if err := bp.Subscribe(ctx, func(c state.Cue) { cues <- c },
		func() { lost <- struct{}{} }, func() { restored <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	h, err := s.Create(ctx, "alice", []byte("before"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := bp.Publish(ctx, state.Cue{Kind: state.CueToolsChanged}); err != nil {
		t.Fatal(err)
	}
	waitCue(t, cues, state.Cue{Kind: state.CueToolsChanged})

	o.Stop(t)
	down := time.Now()
	select {
	case <-lost:
		t.Logf("lost %v after the stop", time.Since(down).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		t.Fatal("lost not called within 2s of the outage")
	}
	calls := []struct {
		name string
		f    func(context.Context) error
	}{
		{"Create", func(c context.Context) error { _, err := s.Create(c, "alice", nil, 0); return err }},
		{"Get", func(c context.Context) error { _, err := s.Get(c, "alice", h); return err }},
		{"CompareAndSet", func(c context.Context) error {
			_, err := s.CompareAndSet(c, "alice", h, 1, nil, 0)
			return err
		}},
		{"Delete", func(c context.Context) error { return s.Delete(c, "alice", h) }},
		{"Once", func(c context.Context) error {
			_, err := s.Once(c, "alice", "k", time.Minute, func() ([]byte, error) { return nil, nil })
			return err
		}},
		{"Publish", func(c context.Context) error { return bp.Publish(c, state.Cue{Kind: state.CueToolsChanged}) }},
	}
	for _, c := range calls {
		t0 := time.Now()
		err := c.f(context.Background()) // no deadline of ours: the store bounds it
		d := time.Since(t0)
		if !errors.Is(err, state.ErrUnavailable) || d > 2*time.Second {
			t.Fatalf("%s during the outage: %v after %v; want ErrUnavailable within 2s", c.name, err, d)
		}
		t.Logf("%s during the outage: ErrUnavailable after %v", c.name, d.Round(time.Millisecond))
	}

	o.Start(t)
	up := time.Now()
	select {
	case <-restored:
		t.Logf("restored %v after the restart", time.Since(up).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("restored not called within 15s of the engine's return")
	}
	if _, err := s.Create(ctx, "alice", []byte("after"), time.Minute); err != nil {
		t.Fatalf("Create after the outage: %v", err)
	}
	uri := "test://after"
	if err := bp.Publish(ctx, state.Cue{Kind: state.CueResourceUpdated, URI: uri}); err != nil {
		t.Fatalf("Publish after the outage: %v", err)
	}
	waitCue(t, cues, state.Cue{Kind: state.CueResourceUpdated, URI: uri})
}

func waitCue(t *testing.T, cues <-chan state.Cue, want state.Cue) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case c := <-cues:
			if c == want {
				return
			}
		case <-timeout:
			t.Fatalf("cue %+v not delivered within 5s", want)
		}
	}
}
