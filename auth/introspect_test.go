package auth_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// TestIntrospectionNegativeCache: an opaque token the endpoint called
// inactive is refused again, for IntrospectionNegativeTTL, without a
// request (a flood of one made-up token costs the endpoint one); past the
// TTL it is asked again. Active answers are not cached.
func TestIntrospectionNegativeCache(t *testing.T) {
	fixture.LeakCheck(t)
	as := newTestAS(t, newECKey(t, "k1"))
	const res = "https://mcp.example/mcp"
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	v, err := auth.New(auth.Config{Resource: res,
		Introspection: &auth.Introspection{URL: as.issuer() + "/introspect", ClientID: as.rsID, ClientSecret: as.rsSecret},
		Now:           func() time.Time { return time.Unix(0, now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	as.addOpaque("good", map[string]any{"active": true, "sub": "op", "aud": res, "exp": time.Now().Add(time.Hour).Unix()})
	for range 3 {
		if _, err := v.Verify(ctxT(t), "made-up"); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("made-up token: %v, want ErrInvalidToken", err)
		}
	}
	if n := as.introspect.Load(); n != 1 {
		t.Errorf("introspection requests for one made-up token, 3 times: %d, want 1", n)
	}
	if n := v.Stats().IntrospectionCacheHits.Load(); n != 2 {
		t.Errorf("IntrospectionCacheHits = %d, want 2", n)
	}
	now.Add(int64(auth.DefaultIntrospectionNegativeTTL + time.Second))
	if _, err := v.Verify(ctxT(t), "made-up"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("made-up token past the TTL: %v", err)
	}
	if n := as.introspect.Load(); n != 2 {
		t.Errorf("introspection requests past the TTL: %d, want 2", n)
	}
	for range 2 {
		if _, err := v.Verify(ctxT(t), "good"); err != nil {
			t.Fatalf("good token: %v", err)
		}
	}
	if n := as.introspect.Load(); n != 4 {
		t.Errorf("introspection requests after 2 good tokens: %d, want 4 (active answers not cached)", n)
	}
}

// TestIntrospectionBounded: F4. Past MaxIntrospections in flight, a
// request with an opaque token is answered 503 with Retry-After
// (counted: auth IntrospectionsLimited, not Rejected) without a request
// to the endpoint; once the slot is free, tokens are introspected again.
func TestIntrospectionBounded(t *testing.T) {
	for _, fe := range frontEnds {
		t.Run(fe, func(t *testing.T) {
			fixture.LeakCheck(t)
			as := newTestAS(t, newECKey(t, "k1"))
			s := startServer(t, fe, auth.Config{MaxIntrospections: 1,
				Introspection: &auth.Introspection{URL: as.issuer() + "/introspect", ClientID: as.rsID, ClientSecret: as.rsSecret}})
			as.addOpaque("good", map[string]any{"active": true, "sub": "op", "aud": s.url, "exp": time.Now().Add(time.Hour).Unix()})
			gate, entered := make(chan struct{}), make(chan struct{}, 4)
			as.mu.Lock()
			as.introspectGate, as.introspectEntered = gate, entered
			as.mu.Unlock()
			var once sync.Once
			open := func() { once.Do(func() { close(gate) }) }
			defer open()

			held := make(chan int, 1)
			go func() { // the call holding the one slot
				req, _ := http.NewRequest("POST", s.url, strings.NewReader(fixture.ToolsCall("1", "echo", `{}`)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "echo")
				req.Header.Set("Authorization", "Bearer good")
				resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
				if err != nil {
					held <- 0
					return
				}
				resp.Body.Close()
				held <- resp.StatusCode
			}()
			select {
			case <-entered:
			case <-time.After(10 * time.Second): // a guard, not a speed goal
				t.Fatal("the first token was not introspected")
			}
			resp, body := s.call(t, "echo", "other")
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
				t.Errorf("an opaque token past MaxIntrospections: %d (Retry-After %q) %s, want 503 with Retry-After",
					resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
			if n := as.introspect.Load(); n != 1 {
				t.Errorf("introspection requests: %d, want 1 (the refused token not sent)", n)
			}
			st := s.v.Stats()
			if st.IntrospectionsLimited.Load() != 1 || st.Rejected.Load() != 0 {
				t.Errorf("IntrospectionsLimited %d, Rejected %d; want 1, 0", st.IntrospectionsLimited.Load(), st.Rejected.Load())
			}
			open()
			if code := <-held; code != 200 {
				t.Errorf("the call holding the slot: %d, want 200", code)
			}
			if resp, body := s.call(t, "echo", "good"); resp.StatusCode != 200 {
				t.Errorf("once the slot is free: %d %s", resp.StatusCode, body)
			}
			if _, err := s.v.Verify(ctxT(t), "good"); errors.Is(err, streamhttp.ErrAuthUnavailable) {
				t.Errorf("a free slot: %v", err)
			}
		})
	}
}
