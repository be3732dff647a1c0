package socket

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/golden"
)

// req builds a request line (id is raw JSON).
func req(id, method, params string) string { return golden.Request(id, method, params) }

// gnetGoroutines are process-wide goroutines gnet's package-level worker
// pool (ants) starts when it is first used; they are not per server.
var gnetGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
}

// leakCheck verifies that no goroutine outlives the test (after cleanups).
func leakCheck(t *testing.T) {
	t.Helper()
	base := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, append([]goleak.Option{base}, gnetGoroutines...)...) })
}

// networks are the two listeners every behaviour is checked on.
var networks = []string{"tcp", "unix"}

func sockAddr(t *testing.T, network string) string {
	if network == "tcp" {
		return "127.0.0.1:0"
	}
	p := filepath.Join(t.TempDir(), "mcp.sock")
	if len(p) >= 100 { // sun_path is about 108 bytes
		dir, err := os.MkdirTemp("", "sock")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		p = filepath.Join(dir, "mcp.sock")
	}
	return p
}

type fixture struct {
	t    *testing.T
	eng  *engine.Server
	srv  *Server
	addr net.Addr
	once sync.Once
}

// start serves eng (golden.Server when nil) on one listener of network.
// The transport, then the engine, are shut down at cleanup, and no
// goroutine may be left.
func start(t *testing.T, network string, cfg Config, eng *engine.Server) *fixture {
	t.Helper()
	leakCheck(t)
	if eng == nil {
		eng = golden.Server(t)
	}
	f := &fixture{t: t, eng: eng, srv: New(eng, cfg)}
	if err := f.srv.Listen(network, sockAddr(t, network)); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Start(); err != nil {
		t.Fatal(err)
	}
	f.addr = f.srv.Addrs()[0]
	t.Cleanup(func() {
		f.shutdown()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := eng.Shutdown(ctx); err != nil {
			t.Errorf("engine shutdown: %v", err)
		}
	})
	return f
}

// shutdown stops the transport (once).
func (f *fixture) shutdown() {
	f.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			f.t.Errorf("socket shutdown: %v", err)
		}
		if err := f.srv.Wait(); err != nil {
			f.t.Errorf("Wait: %v", err)
		}
	})
}

type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (f *fixture) dial() *client {
	f.t.Helper()
	c, err := net.Dial(f.addr.Network(), f.addr.String())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return &client{t: f.t, c: c, r: bufio.NewReaderSize(c, 1<<20)}
}

func (c *client) send(lines ...string) {
	c.t.Helper()
	for _, l := range lines {
		if _, err := c.c.Write([]byte(l + "\n")); err != nil {
			c.t.Fatalf("write: %v", err)
		}
	}
}

// line reads one line (without its LF) within 5 s.
func (c *client) line() string {
	c.t.Helper()
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read: %v (got %q)", err, l)
	}
	if strings.HasSuffix(l, "\r\n") || !json.Valid([]byte(l)) {
		c.t.Fatalf("not one JSON object ending in LF: %q", l)
	}
	return strings.TrimSuffix(l, "\n")
}

// eof waits until the server has closed the connection.
func (c *client) eof() {
	c.t.Helper()
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.t.Fatal("the server did not close the connection")
			}
			return
		}
		_ = l
	}
}

type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func parse(t *testing.T, l string) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal([]byte(l), &r); err != nil {
		t.Fatalf("%v: %s", err, l)
	}
	return r
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Generous: what is waited for can take seconds under -race on a
	// loaded machine (TestWriteProgressDeadline/unix builds and writes a
	// 16 MiB answer before its write can stall: 1 to 4 s, and past the
	// 5 s this bound was with seed 1796583630021692613). A condition
	// that never holds fails all the same.
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGolden replays every golden conversation stdio has (listen, cancel,
// end with work in flight, parse errors, CRLF, panics, _meta case variants,
// the dual-era probe) over TCP and over a Unix socket (CUST-04): the same
// bytes as on stdio. The conversation ends with the transport's Shutdown,
// which completes open listen streams, lets in-flight work finish, flushes
// and closes.
func TestGolden(t *testing.T) {
	for _, network := range networks {
		for _, c := range golden.Conversations(t) {
			t.Run(network+"/"+c.Name, func(t *testing.T) {
				f := start(t, network, Config{}, nil)
				conn := f.dial()
				golden.Replay(t, c, conn.c, conn.c, f.shutdown)
			})
		}
	}
}

// TestOverlongLineCloses: a line over MaxLine is answered -32600 without an
// id and the connection is closed, as nats does (A1 on sockets); the
// server stays up for others.
func TestOverlongLineCloses(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			f := start(t, network, Config{MaxLine: 64 << 10}, nil)
			c := f.dial()
			go func() { // the kernel buffers may not take it all at once
				_, _ = c.c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("a", 200<<10) + "\"}}\n"))
			}()
			m := parse(t, c.line())
			if m.Error == nil || m.Error.Code != -32600 || m.ID != nil || !strings.Contains(m.Error.Message, "too large") {
				t.Fatalf("over-long line: %+v", m)
			}
			c.eof()
			if n := f.eng.Stats().LinesTooLong.Load(); n != 1 {
				t.Fatalf("LinesTooLong = %d", n)
			}
			d := f.dial()
			d.send(req("2", "tools/call", `"name":"echo","arguments":{"text":"ok"}`))
			if !strings.Contains(d.line(), `"text":"ok"`) {
				t.Fatal("server did not serve a new connection")
			}
		})
	}
}

// TestCloseCancelsInFlight: when the peer closes the connection, its
// requests in flight are cancelled (a disconnect is a cancellation, as on
// Streamable HTTP) and the connection's state is released.
func TestCloseCancelsInFlight(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			eng := golden.Server(t)
			var cancelled atomic.Int32
			started := make(chan struct{}, 4)
			_ = eng.AddTool(engine.Tool{Name: "hold", Handler: func(c *engine.Call) error {
				started <- struct{}{}
				<-c.Done()
				cancelled.Add(1)
				return c.Err()
			}})
			f := start(t, network, Config{}, eng)
			c := f.dial()
			c.send(req("1", "tools/call", `"name":"hold","arguments":{}`), req("2", "tools/call", `"name":"hold","arguments":{}`))
			<-started
			<-started
			c.c.Close()
			waitFor(t, "both handlers cancelled", func() bool { return cancelled.Load() == 2 })
			waitFor(t, "connection released", func() bool { return f.srv.Stats().Open.Load() == 0 })
		})
	}
}

// bigServer has a tool answering n bytes of text.
func bigServer(t *testing.T) *engine.Server {
	eng := golden.Server(t)
	_ = eng.AddTool(engine.Tool{Name: "big", Handler: func(c *engine.Call) error {
		var a struct {
			N int `json:"n"`
		}
		if err := c.Bind(&a); err != nil {
			return err
		}
		c.Text(strings.Repeat("x", a.N))
		return nil
	}})
	return eng
}

// dialSmallWindow connects with a tiny receive buffer, so that a peer that
// stops reading stalls the server's writes quickly.
func dialSmallWindow(t *testing.T, a net.Addr) net.Conn {
	d := net.Dialer{Control: func(network, address string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = setRecvBuffer(fd, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial(a.Network(), a.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestWriteProgressDeadline: output below MaxPending that makes no progress
// for WriteTimeout closes the connection, counted (A18: "a write makes no
// progress for 30 s"; shortened here).
func TestWriteProgressDeadline(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			f := start(t, network, Config{WriteTimeout: 300 * time.Millisecond}, bigServer(t))
			slow := dialSmallWindow(t, f.addr)
			if _, err := fmt.Fprintf(slow, "%s\n", req("1", "tools/call", `"name":"big","arguments":{"n":16777216}`)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the stalled connection to be closed", func() bool { return f.srv.Stats().WriteTimeouts.Load() == 1 })
			if f.eng.Stats().SlowConsumers.Load() != 1 {
				t.Fatalf("SlowConsumers = %d", f.eng.Stats().SlowConsumers.Load())
			}
			waitFor(t, "its connection released", func() bool { return f.srv.Stats().Open.Load() == 0 })
		})
	}
}

// TestMaxConns: past MaxConns a new connection is closed at once and
// counted; the open ones are unaffected.
func TestMaxConns(t *testing.T) {
	f := start(t, "tcp", Config{MaxConns: 2}, nil)
	a, b := f.dial(), f.dial()
	a.send(req("1", "tools/list", ""))
	b.send(req("1", "tools/list", ""))
	a.line()
	b.line()
	c := f.dial()
	c.eof()
	if f.srv.Stats().Refused.Load() != 1 {
		t.Fatalf("Refused = %d", f.srv.Stats().Refused.Load())
	}
	a.send(req("2", "tools/call", `"name":"echo","arguments":{"text":"still"}`))
	if !strings.Contains(a.line(), "still") {
		t.Fatal("open connection not served")
	}
}

// TestShutdownCompletesListenStreams: the transport's Shutdown gives every
// open listen stream, on every connection, its final result (SUB-10), then
// closes; the engine keeps running for other transports.
func TestShutdownCompletesListenStreams(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			f := start(t, network, Config{}, nil)
			const n = 20
			conns := make([]*client, n)
			for i := range conns {
				conns[i] = f.dial()
				conns[i].send(req(fmt.Sprintf(`"l%d"`, i), "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
				if m := parse(t, conns[i].line()); m.Method != "notifications/subscriptions/acknowledged" {
					t.Fatalf("ack: %+v", m)
				}
			}
			f.shutdown()
			for i, c := range conns {
				m := parse(t, c.line())
				if string(m.ID) != fmt.Sprintf(`"l%d"`, i) || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
					t.Fatalf("final result %d: %+v", i, m)
				}
				c.eof()
			}
			if f.eng.Closing() {
				t.Fatal("the transport's Shutdown shut the engine down")
			}
		})
	}
}

// TestCancelFlood: a peer that sends notifications/cancelled for requests
// that do not exist, beyond the budget, is closed and counted (C8); others
// are served.
func TestCancelFlood(t *testing.T) {
	f := start(t, "tcp", Config{CancelBudget: 100}, nil)
	flood := f.dial()
	var b strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", 1000+i)
	}
	go func() { _, _ = flood.c.Write([]byte(b.String())) }()
	flood.eof()
	if f.eng.Stats().CancelFloods.Load() != 1 {
		t.Fatalf("CancelFloods = %d", f.eng.Stats().CancelFloods.Load())
	}
	// Requests earn the budget back: a peer whose cancels race its own
	// answers is never cut.
	c := f.dial()
	for i := 0; i < 300; i++ {
		c.send(req(fmt.Sprint(i), "tools/call", `"name":"echo","arguments":{"text":"x"}`))
		c.line()
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, i))
	}
	c.send(req(`"last"`, "tools/list", ""))
	if m := parse(t, c.line()); string(m.ID) != `"last"` {
		t.Fatalf("served peer: %+v", m)
	}
}

// TestInputBacklogBounded: while MaxInFlight requests are in flight the
// event loop cannot stop reading; the input it keeps is bounded by
// MaxBacklog, past which the connection is closed and counted (A19, C8).
func TestInputBacklogBounded(t *testing.T) {
	eng2 := engine.New(engine.Config{MaxInFlight: 2})
	_ = eng2.AddTool(engine.Tool{Name: "block", Handler: func(c *engine.Call) error { <-c.Done(); return c.Err() }})
	f := start(t, "tcp", Config{MaxLine: 4096, MaxBacklog: 256 << 10}, eng2)
	c := f.dial()
	c.send(req("1", "tools/call", `"name":"block","arguments":{}`), req("2", "tools/call", `"name":"block","arguments":{}`))
	waitFor(t, "two in flight", func() bool { return eng2.Stats().Requests.Load() == 2 })
	line := req("3", "tools/list", "") + "\n"
	go func() {
		for i := 0; i < (1<<20)/len(line); i++ {
			if _, err := c.c.Write([]byte(line)); err != nil {
				return
			}
		}
	}()
	c.eof()
	if eng2.Stats().InputOverflows.Load() != 1 || eng2.Stats().InFlightStalls.Load() == 0 {
		t.Fatalf("InputOverflows = %d, InFlightStalls = %d", eng2.Stats().InputOverflows.Load(), eng2.Stats().InFlightStalls.Load())
	}
}

// TestInFlightBoundResumes: at MaxInFlight the connection takes no more
// frames; when a request ends it goes on with what it kept (A19).
func TestInFlightBoundResumes(t *testing.T) {
	eng := engine.New(engine.Config{MaxInFlight: 2})
	release := make(chan struct{})
	_ = eng.AddTool(engine.Tool{Name: "gate", Handler: func(c *engine.Call) error {
		<-release
		c.Text("released")
		return nil
	}})
	_ = eng.AddTool(engine.Tool{Name: "echo", Inline: true, Handler: func(c *engine.Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	f := start(t, "tcp", Config{}, eng)
	c := f.dial()
	c.send(req("1", "tools/call", `"name":"gate","arguments":{}`), req("2", "tools/call", `"name":"gate","arguments":{}`),
		req("3", "tools/call", `"name":"echo","arguments":{"text":"third"}`))
	waitFor(t, "the stall", func() bool { return eng.Stats().InFlightStalls.Load() == 1 })
	_ = c.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if l, err := c.r.ReadString('\n'); err == nil {
		t.Fatalf("answered while the bound held: %s", l)
	}
	c.r.Reset(c.c)
	close(release)
	got := map[string]bool{}
	for i := 0; i < 3; i++ {
		got[string(parse(t, c.line()).ID)] = true
	}
	if !got["1"] || !got["2"] || !got["3"] {
		t.Fatalf("answers: %v", got)
	}
}

// TestAuthenticate: the connection's principal comes from the hook — Unix
// peer credentials or the TCP remote address — and reaches handlers as
// Call.Principal; input that arrives during authentication waits for it; a
// refusal closes the connection and is counted.
func TestAuthenticate(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			eng := golden.Server(t)
			_ = eng.AddTool(engine.Tool{Name: "whoami", Handler: func(c *engine.Call) error {
				c.Text(fmt.Sprint(c.Principal()))
				return nil
			}})
			var calls atomic.Int32
			f := start(t, network, Config{Authenticate: func(ctx context.Context, p Peer) (any, error) {
				if calls.Add(1) == 2 {
					return nil, errors.New("second connection refused")
				}
				time.Sleep(50 * time.Millisecond) // the request below arrives meanwhile
				if p.Network == "unix" {
					if p.Cred == nil || p.Cred.UID != os.Getuid() || p.Cred.PID != os.Getpid() {
						return nil, fmt.Errorf("credentials %+v", p.Cred)
					}
					return fmt.Sprintf("uid:%d", p.Cred.UID), nil
				}
				if p.Network != "tcp" || p.Addr == nil || !strings.HasPrefix(p.Addr.String(), "127.0.0.1:") {
					return nil, fmt.Errorf("peer %+v", p)
				}
				return "tcp-peer", nil
			}}, eng)
			c := f.dial()
			c.send(req("1", "tools/call", `"name":"whoami","arguments":{}`))
			want := "tcp-peer"
			if network == "unix" {
				want = fmt.Sprintf("uid:%d", os.Getuid())
			}
			if l := c.line(); !strings.Contains(l, `"text":"`+want+`"`) {
				t.Fatalf("whoami: %s", l)
			}
			refused := f.dial()
			// The server may close it before this write: no error check.
			_, _ = refused.c.Write([]byte(req("1", "tools/list", "") + "\n"))
			refused.eof()
			if f.srv.Stats().AuthFailures.Load() != 1 {
				t.Fatalf("AuthFailures = %d", f.srv.Stats().AuthFailures.Load())
			}
		})
	}
}

// TestListenRules: the loopback rule (SEC-04) and the Unix path checks.
func TestListenRules(t *testing.T) {
	eng := engine.New(engine.Config{})
	defer func() { _ = eng.Shutdown(context.Background()) }()
	s := New(eng, Config{})
	if err := s.Listen("tcp", "0.0.0.0:0"); !errors.Is(err, ErrNonLoopback) {
		t.Errorf("non-loopback: %v", err)
	}
	// F3: AllowNonLoopback alone no longer serves anonymous callers on a
	// network address: an Authenticate, or InsecureNoAuth saying so.
	if err := New(eng, Config{AllowNonLoopback: true}).Listen("tcp", "0.0.0.0:0"); !errors.Is(err, ErrNoAuth) {
		t.Errorf("non-loopback allowed, no authenticator: %v", err)
	}
	auth := func(context.Context, Peer) (any, error) { return "p", nil }
	if err := New(eng, Config{AllowNonLoopback: true, Authenticate: auth}).Listen("tcp", "0.0.0.0:0"); err != nil {
		t.Errorf("non-loopback allowed, with an authenticator: %v", err)
	}
	if err := New(eng, Config{AllowNonLoopback: true, InsecureNoAuth: true}).Listen("tcp", "0.0.0.0:0"); err != nil {
		t.Errorf("non-loopback allowed, InsecureNoAuth: %v", err)
	}
	if err := New(eng, Config{InsecureNoAuth: true}).Listen("tcp", "0.0.0.0:0"); !errors.Is(err, ErrNonLoopback) {
		t.Errorf("InsecureNoAuth without AllowNonLoopback: %v", err)
	}
	// A Unix socket others may connect to is the same case; the default
	// mode (the owner only) needs nothing.
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{}, nil},
		{Config{UnixMode: 0o660}, ErrNoAuth},
		{Config{UnixMode: 0o606}, ErrNoAuth},
		{Config{UnixMode: 0o660, Authenticate: auth}, nil},
		{Config{UnixMode: 0o666, InsecureNoAuth: true}, nil},
	} {
		if err := New(eng, tc.cfg).Listen("unix", filepath.Join(t.TempDir(), "s")); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("unix, mode %v, authenticator %v, InsecureNoAuth %v: %v, want %v", tc.cfg.UnixMode, tc.cfg.Authenticate != nil, tc.cfg.InsecureNoAuth, err, tc.want)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "regular")
	_ = os.WriteFile(file, []byte("keep me"), 0o600)
	if err := s.Listen("unix", file); !errors.Is(err, ErrNotSocket) {
		t.Errorf("regular file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep me" {
		t.Error("the regular file was touched")
	}
	live := sockAddr(t, "unix")
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := s.Listen("unix", live); !errors.Is(err, ErrSocketInUse) {
		t.Errorf("live socket: %v", err)
	}
	if err := s.Start(); !errors.Is(err, ErrNoListener) {
		t.Errorf("Start without listeners: %v", err)
	}
}

// TestStaleSocketReplaced: a socket file nobody serves any more (a crashed
// server's) is replaced.
func TestStaleSocketReplaced(t *testing.T) {
	path := sockAddr(t, "unix")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	leakCheck(t)
	eng := golden.Server(t)
	s := New(eng, Config{})
	if err := s.Listen("unix", path); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = s.Shutdown(ctx)
	_ = eng.Shutdown(ctx)
}
