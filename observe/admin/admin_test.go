package admin

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/mcpwire/mcpwire/codec"
	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/observe/metrics"
	"github.com/mcpwire/mcpwire/state/redisstate"
)

var client = &http.Client{Timeout: 10 * time.Second}

func leakCheck(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent(),
		// rueidis's reconnect delay after a failed dial (a bounded sleep
		// that outlives Close; see state/redisstate's TestMain).
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1")}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		goleak.VerifyNone(t, opts...)
	})
}

// start serves a on a loopback port and returns its base URL.
func start(t *testing.T, a *Server) string {
	t.Helper()
	ln, err := a.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEndpoints: /metrics serves the engine's counters and the runtime's
// metrics in the text format, /healthz and /readyz answer 200 on a live
// server, /debug/pprof/ lists the profiles, and other methods are refused.
func TestEndpoints(t *testing.T) {
	leakCheck(t)
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	srv.Stats().Requests.Add(42)
	a := New(Config{Gatherer: metrics.Registry(metrics.New(srv)), Checks: []Check{EngineCheck(srv)}, Pprof: true})
	base := start(t, a)

	code, body := get(t, base+"/metrics")
	if code != 200 || !strings.Contains(body, "\nmcpwire_engine_requests_total 42\n") ||
		!strings.Contains(body, "# TYPE go_goroutines gauge") || !strings.Contains(body, "process_resident_memory_bytes") {
		t.Fatalf("/metrics: %d\n%.2000s", code, body)
	}
	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	if code, body := get(t, base+"/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("/debug/pprof/: %d %.300s", code, body)
	}
	if code, body := get(t, base+"/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("/debug/pprof/goroutine: %d %.300s", code, body)
	}
	if code, _ := get(t, base+"/mcp"); code != 404 {
		t.Fatalf("/mcp on the admin port: %d, want 404", code)
	}
	resp, err := client.Post(base+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /metrics: %d, want 405", resp.StatusCode)
	}
}

// TestReadyzDuringShutdown: /readyz turns 503 as soon as Drain is called
// (the server begins to shut down), and stays so; an engine whose Shutdown
// has begun — here held open by a request still running — is not ready
// either, while /healthz and /metrics still answer.
func TestReadyzDuringShutdown(t *testing.T) {
	leakCheck(t)
	t.Run("drain", func(t *testing.T) {
		srv := engine.New(engine.Config{})
		defer func() { _ = srv.Shutdown(context.Background()) }()
		a := New(Config{Checks: []Check{EngineCheck(srv)}})
		base := start(t, a)
		if code, _ := get(t, base+"/readyz"); code != 200 {
			t.Fatalf("before: %d", code)
		}
		a.Drain()
		if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "shutting down") {
			t.Fatalf("draining: %d %q", code, body)
		}
		if code, _ := get(t, base+"/healthz"); code != 200 {
			t.Fatalf("healthz while draining: %d", code)
		}
	})
	t.Run("engine", func(t *testing.T) {
		srv := engine.New(engine.Config{})
		gate := make(chan struct{})
		started := make(chan struct{})
		_ = srv.AddTool(engine.Tool{Name: "block", Handler: func(c *engine.Call) error {
			close(started)
			<-gate
			c.Text("ok")
			return nil
		}})
		a := New(Config{Gatherer: metrics.Registry(metrics.New(srv)), Checks: []Check{EngineCheck(srv)}})
		base := start(t, a)
		rep := &waitReply{done: make(chan struct{})}
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		begin(t, srv, msg, rep)
		<-started
		if code, _ := get(t, base+"/readyz"); code != 200 {
			t.Fatalf("before: %d", code)
		}
		shut := make(chan error, 1)
		go func() { shut <- srv.Shutdown(context.Background()) }()
		deadline := time.Now().Add(5 * time.Second)
		for !srv.Closing() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		code, body := get(t, base+"/readyz")
		if code != 503 || !strings.Contains(body, "engine: shutting down") {
			t.Fatalf("during shutdown: %d %q", code, body)
		}
		if _, m := get(t, base+"/metrics"); !strings.Contains(m, "\nmcpwire_shutting_down 1\n") {
			t.Fatalf("metrics during shutdown lack mcpwire_shutting_down 1")
		}
		close(gate)
		<-rep.done
		if err := <-shut; err != nil {
			t.Fatal(err)
		}
	})
}

// TestReadyzRedisDown: with a Redis store configured, /readyz follows
// Redis: ready while it answers, 503 naming redis once it is stopped, ready
// again after it is back.
func TestReadyzRedisDown(t *testing.T) {
	leakCheck(t)
	m := miniredis.RunT(t)
	st, err := redisstate.New(context.Background(), "redis://"+m.Addr(), redisstate.Config{OpTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := New(Config{Checks: []Check{{Name: "redis", Check: st.Ping}}})
	base := start(t, a)
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("redis up: %d %q", code, body)
	}
	m.Close()
	code, body := get(t, base+"/readyz")
	if code != 503 || !strings.HasPrefix(body, "not ready: redis: ") {
		t.Fatalf("redis down: %d %q", code, body)
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body = get(t, base+"/readyz")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis back: still %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLoopbackOnly: Listen refuses a non-loopback address unless
// AllowNonLoopback; loopback names pass.
func TestLoopbackOnly(t *testing.T) {
	a := New(Config{})
	for i, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:9090", "example.com:9090"} {
		if _, err := a.Listen(addr); !errors.Is(err, ErrNonLoopback) {
			t.Errorf("%d: Listen(%q) = %v, want ErrNonLoopback", i, addr, err)
		}
	}
	for i, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := a.Listen(addr)
		if err != nil {
			t.Errorf("%d: Listen(%q): %v", i, addr, err)
			continue
		}
		ln.Close()
	}
}

type waitReply struct{ done chan struct{} }

func (r *waitReply) Notify(*engine.Request, []byte) error     { return nil }
func (r *waitReply) Reply(*engine.Request, []byte, int) error { return nil }
func (r *waitReply) Done(*engine.Request)                     { close(r.done) }

func begin(t *testing.T, srv *engine.Server, msg []byte, rep engine.Replier) {
	t.Helper()
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	r := engine.NewScope(srv, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatal(e.Message)
	}
	r.Start()
}
