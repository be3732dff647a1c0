//go:build unix

package redisstate

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/state"
)

// TestRedisFrozen: a server that stops answering without closing its
// connections (SIGSTOP) must not hang anything: calls fail with
// ErrUnavailable within OpTimeout, the subscription is declared lost
// (after about 1 s idle + HealthTimeout),
// and it comes back once the server answers again (SIGCONT).
func TestRedisFrozen(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	s, err := New(ctx, r.URL(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lost := make(chan struct{}, 4)
	restored := make(chan struct{}, 4)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.Subscribe(sctx, func(state.Cue) {}, func() { lost <- struct{}{} }, func() { restored <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	h, err := s.Create(ctx, "alice", []byte("x"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pid := r.Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	frozen := time.Now()
	for i, f := range []func() error{
		func() error { _, err := s.Get(ctx, "alice", h); return err },
		func() error { return s.Publish(ctx, state.Cue{Kind: state.CueToolsChanged}) },
		func() error { _, err := s.CompareAndSet(ctx, "alice", h, 1, nil, 0); return err },
	} {
		t0 := time.Now()
		err := f()
		if d := time.Since(t0); !errors.Is(err, state.ErrUnavailable) || d > 2*time.Second {
			t.Fatalf("call %d on a frozen server: %v after %v", i, err, d)
		}
		t.Logf("call %d on a frozen server: ErrUnavailable after %v", i, time.Since(t0).Round(time.Millisecond))
	}
	select {
	case <-lost:
		t.Logf("lost %v after the freeze", time.Since(frozen).Round(time.Millisecond))
	case <-time.After(DefaultHealthTimeout + 4*time.Second):
		t.Fatalf("lost not called within %v of the freeze", DefaultHealthTimeout+3*time.Second)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-restored:
	case <-time.After(10 * time.Second):
		t.Fatal("restored not called within 10s of the thaw")
	}
	if _, err := s.Get(ctx, "alice", h); err != nil {
		t.Fatalf("Get after the thaw: %v", err)
	}
}
