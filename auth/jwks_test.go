package auth_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestKeySetFetchOutlivesCaller: a client that sends a token with an
// unknown kid and leaves while the key set is being fetched neither
// aborts the fetch nor spends the refetch interval (JWKSMinRefetch) on
// it: after a key rotation the callers that follow, with tokens of the
// new key, are served by that one fetch (shared, not repeated).
func TestKeySetFetchOutlivesCaller(t *testing.T) {
	fixture.LeakCheck(t)
	k1 := newECKey(t, "k1")
	as := newTestAS(t, k1)
	const res = "https://mcp.example/mcp"
	v, err := auth.New(auth.Config{Resource: res, Issuer: as.issuer()})
	if err != nil {
		t.Fatal(err)
	}
	claims := func() map[string]any {
		return map[string]any{"iss": as.issuer(), "sub": "u", "aud": res, "exp": time.Now().Add(time.Hour).Unix()}
	}
	if _, err := v.Verify(ctxT(t), k1.sign(t, claims())); err != nil {
		t.Fatalf("k1: %v", err)
	}
	k2 := newRSAKey(t, "k2")
	as.rotate(k2)
	gate, entered := make(chan struct{}), make(chan struct{}, 4)
	as.mu.Lock()
	as.jwksGate, as.jwksEntered = gate, entered
	as.mu.Unlock()
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	defer open()

	// The attacker: a token naming k2 (unknown to the verifier yet), and
	// gone while the fetch it caused is held.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone := make(chan error, 1)
	forged := k2.sign(t, claims())
	go func() {
		_, err := v.Verify(ctx, forged)
		gone <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second): // a guard, not a speed goal
		t.Fatal("the key set was not fetched")
	}
	cancel()
	if err := <-gone; !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("the caller that left: %v, want ErrInvalidToken", err)
	}
	open()

	// The legitimate callers with k2 tokens, within JWKSMinRefetch.
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	tctx := ctxT(t)
	for range 3 {
		tok := k2.sign(t, claims())
		wg.Go(func() {
			_, err := v.Verify(tctx, tok)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a k2 token after the caller left: %v", err)
		}
	}
	if n := as.jwksHits.Load(); n != 2 {
		t.Errorf("key set requested %d times, want 2 (the first, and the one fetch the rotation needed)", n)
	}
	if n := v.Stats().KeyFetches.Load(); n != 2 {
		t.Errorf("KeyFetches = %d, want 2", n)
	}
}
