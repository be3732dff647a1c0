package redisstate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/statetest"
)

// startRedis starts a private redis-server for tb (internal/redistest).
func startRedis(tb testing.TB) *redistest.Server { return redistest.Start(tb) }

// factory returns replicas on url: every call is a new Store (a new
// replica) on the same Redis.
func factory(url func(t *testing.T) string, opt Config) func(t *testing.T) (state.Store, state.Backplane) {
	return func(t *testing.T) (state.Store, state.Backplane) {
		s, err := New(context.Background(), url(t), opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, s
	}
}

func TestMiniredisContract(t *testing.T) {
	var mu sync.Mutex
	servers := map[*testing.T]*miniredis.Miniredis{}
	url := func(t *testing.T) string {
		mu.Lock()
		defer mu.Unlock()
		m := servers[t]
		if m == nil {
			m = miniredis.RunT(t)
			servers[t] = m
			// miniredis expires keys only when told time passed.
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				tk := time.NewTicker(10 * time.Millisecond)
				defer tk.Stop()
				last := time.Now()
				for {
					select {
					case <-stop:
						return
					case now := <-tk.C:
						m.FastForward(now.Sub(last))
						last = now
					}
				}
			}()
			t.Cleanup(func() { close(stop); <-done })
		}
		return "redis://" + m.Addr() + "/0"
	}
	statetest.Run(t, factory(url, Config{}))
}

func TestRedisContract(t *testing.T) {
	r := startRedis(t)
	statetest.Run(t, factory(func(*testing.T) string { return r.URL() }, Config{}))
}

func TestRedisOutage(t *testing.T) {
	r := startRedis(t)
	statetest.RunOutage(t, factory(func(*testing.T) string { return r.URL() }, Config{}), statetest.Outage{
		Stop:  func(t *testing.T) { r.Kill() },
		Start: func(t *testing.T) { r.Restart(t) },
	})
}

// TestRedisUnreachable: New against a port nobody listens on fails
// promptly with ErrUnavailable (E1).
func TestRedisUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t0 := time.Now()
	_, err = New(context.Background(), "redis://"+addr+"/0", Config{})
	if !errors.Is(err, state.ErrUnavailable) || time.Since(t0) > 2*time.Second {
		t.Fatalf("New on a closed port: %v after %v", err, time.Since(t0))
	}
}

// TestOnceLease: a replica that took a Once key and died (no renewal)
// holds it for OnceLease at most; then another replica runs the call.
func TestOnceLease(t *testing.T) {
	m := miniredis.RunT(t)
	s, err := New(context.Background(), "redis://"+m.Addr(), Config{OnceLease: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	k := s.onceKey("alice", "k")
	// A dead replica's lease.
	if err := m.Set(k, "p"+strings.Repeat("de", 16)); err != nil {
		t.Fatal(err)
	}
	m.SetTTL(k, 300*time.Millisecond)
	res := make(chan error, 1)
	go func() {
		v, err := s.Once(ctx, "alice", "k", time.Minute, func() ([]byte, error) { return []byte("mine"), nil })
		if err == nil && string(v) != "mine" {
			err = fmt.Errorf("got %q", v)
		}
		res <- err
	}()
	select {
	case err := <-res:
		t.Fatalf("Once did not wait for the lease: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	m.FastForward(time.Second)
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Once still waiting after the lease expired")
	}
}

func TestCueCodec(t *testing.T) {
	const origin0, origin7 = "\x00\x00\x00\x00\x00\x00\x00\x00", "\x01\x02\x03\x04\x05\x06\x07\x08"
	for i, tc := range []struct {
		in   string
		want state.Cue
		ok   bool
	}{
		{"\x01", state.Cue{Kind: state.CueToolsChanged}, true},
		{"\x02", state.Cue{Kind: state.CuePromptsChanged}, true},
		{"\x03", state.Cue{Kind: state.CueResourcesChanged}, true},
		{"\x04file:///a", state.Cue{Kind: state.CueResourceUpdated, URI: "file:///a"}, true},
		{"", state.Cue{}, false},
		{"\x04", state.Cue{}, false},
		{"\x01x", state.Cue{}, false},
		{"\x05x", state.Cue{}, false},
		{"\x00", state.Cue{}, false},
		{"\x05\x00" + origin0, state.Cue{Kind: state.CueMissed}, true},
		{"\x05\x00" + origin7, state.Cue{Kind: state.CueMissed, Origin: 0x0102030405060708}, true},
		{"\x05\x01" + origin7, state.Cue{Kind: state.CueMissed, Of: state.CueToolsChanged, Origin: 0x0102030405060708}, true},
		{"\x05\x04" + origin7 + "file:///a", state.Cue{Kind: state.CueMissed, Of: state.CueResourceUpdated, URI: "file:///a", Origin: 0x0102030405060708}, true},
		{"\x05", state.Cue{}, false},
		{"\x05\x00", state.Cue{}, false},      // no origin
		{"\x05\x04file:", state.Cue{}, false}, // too short for an origin
		{"\x05\x00" + origin7[:7], state.Cue{}, false},
		{"\x05\x00" + origin0 + "x", state.Cue{}, false},
		{"\x05\x04" + origin0, state.Cue{}, false},
		{"\x05\x05" + origin0, state.Cue{}, false},
		{"\x05\x01" + origin0 + "x", state.Cue{}, false},
		{"\x05\x09" + origin0, state.Cue{}, false},
	} {
		got, ok := parseCue(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%d: parseCue(%q) = %+v, %v; want %+v, %v", i, tc.in, got, ok, tc.want, tc.ok)
		}
		if ok {
			if enc := string(appendCue(nil, got)); enc != tc.in {
				t.Errorf("%d: appendCue = %q, want %q", i, enc, tc.in)
			}
		}
	}
}

func TestRedact(t *testing.T) {
	if got := redact("redis://user:secret@127.0.0.1:6379/0"); got != "redis://…@127.0.0.1:6379/0" {
		t.Fatal(got)
	}
	for i, u := range []string{"redis://user:secret@127.0.0.1:x/0", "http://user:secret@127.0.0.1:6379", "redis://user:secret@[::1/0"} {
		_, err := New(context.Background(), u, Config{})
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%d: New(%q): %v", i, u, err)
		}
	}
}
