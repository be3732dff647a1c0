package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func callMsg(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + meta + `}}`
}

// frames collects what a MemConn delivers.
type frames struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func newFrames() *frames { return &frames{ch: make(chan struct{}, 1024)} }

func (f *frames) deliver(b []byte) error {
	f.mu.Lock()
	f.got = append(f.got, string(b))
	f.mu.Unlock()
	f.ch <- struct{}{}
	return nil
}

// wait returns the first frame containing sub, waiting up to 5 s.
func (f *frames) wait(t *testing.T, sub string) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		f.mu.Lock()
		for _, s := range f.got {
			if strings.Contains(s, sub) {
				f.mu.Unlock()
				return s
			}
		}
		f.mu.Unlock()
		select {
		case <-f.ch:
		case <-deadline:
			t.Fatalf("no frame with %q; got %q", sub, f.got)
		}
	}
}

// record is what the test hooks saw of one call.
type record struct {
	method, name string
	started      bool
	o            engine.Outcome
	ended        bool
	listenStart  bool
	listenEnd    bool
	value        any
}

type recorder struct {
	mu    sync.Mutex
	calls map[string]*record // by request id
	conns []string
	ended chan string
}

type ctxKey struct{}

func newRecorder() *recorder {
	return &recorder{calls: map[string]*record{}, ended: make(chan string, 100)}
}

func (r *recorder) hooks() engine.Hooks {
	return engine.Hooks{
		ConnStart: func(ci *engine.ConnInfo) {
			r.mu.Lock()
			r.conns = append(r.conns, "start "+ci.Transport)
			r.mu.Unlock()
			ci.Data = "conn-data"
		},
		ConnEnd: func(ci *engine.ConnInfo, err error) {
			r.mu.Lock()
			r.conns = append(r.conns, fmt.Sprintf("end %s %v", ci.Transport, ci.Data))
			r.mu.Unlock()
		},
		CallStart: func(c *engine.Call) {
			r.mu.Lock()
			r.calls[string(c.ID())] = &record{method: c.Method(), name: c.Name(), started: true}
			r.mu.Unlock()
			c.SetValues(context.WithValue(c.ValueContext(), ctxKey{}, "attached:"+string(c.ID())))
		},
		CallEnd: func(c *engine.Call, o engine.Outcome) {
			r.mu.Lock()
			rec := r.calls[string(c.ID())]
			rec.o, rec.ended = o, true
			rec.value = c.Value(ctxKey{})
			r.mu.Unlock()
			r.ended <- string(c.ID())
		},
		ListenStart: func(c *engine.Call) {
			r.mu.Lock()
			r.calls[string(c.ID())].listenStart = true
			r.mu.Unlock()
		},
		ListenEnd: func(c *engine.Call, o engine.Outcome) {
			r.mu.Lock()
			r.calls[string(c.ID())].listenEnd = true
			r.mu.Unlock()
		},
	}
}

func (r *recorder) waitEnd(t *testing.T, id string) record {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		r.mu.Lock()
		if rec := r.calls[id]; rec != nil && rec.ended {
			out := *rec
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		select {
		case <-r.ended:
		case <-deadline:
			t.Fatalf("call %s did not end", id)
		}
	}
}

func hookServer(t *testing.T, opt engine.Config) *engine.Server {
	t.Helper()
	srv := engine.New(opt)
	add := func(tl engine.Tool) {
		if err := srv.AddTool(tl); err != nil {
			t.Fatal(err)
		}
	}
	add(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		v, _ := c.Value(ctxKey{}).(string)
		c.Text("echo " + v)
		return nil
	}})
	add(engine.Tool{Name: "fails", Handler: func(c *engine.Call) error { return errors.New("tool failed") }})
	add(engine.Tool{Name: "wait", Handler: func(c *engine.Call) error {
		<-c.Done()
		return c.Err()
	}})
	add(engine.Tool{Name: "stuck", Timeout: 20 * time.Millisecond, Handler: func(c *engine.Call) error {
		<-c.Done()
		return nil
	}})
	add(engine.Tool{Name: "ask", Handler: func(c *engine.Call) error {
		return c.InputRequired(mcp.InputRequired{RequestState: "s1"})
	}})
	add(engine.Tool{Name: "secret", Handler: func(c *engine.Call) error { c.Text("secret"); return nil }})
	return srv
}

// TestHooksOutcomes: every request gets one CallStart and one CallEnd whose
// Outcome says what became of it, on the line core (stdio and sockets
// share it); values attached by CallStart reach the handler and CallEnd.
func TestHooksOutcomes(t *testing.T) {
	rec := newRecorder()
	srv := hookServer(t, engine.Config{Hooks: rec.hooks()})
	f := newFrames()
	sc := engine.NewScope(srv, "stdio")
	m := linestream.NewMem(sc, f.deliver, linestream.Config{}, nil)

	send := func(s string) {
		t.Helper()
		if err := m.Send([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	send(callMsg("1", "echo", "{}"))
	send(callMsg("2", "nope", "{}"))
	send(callMsg("3", "fails", "{}"))
	send(callMsg("4", "ask", "{}"))
	send(callMsg("5", "stuck", "{}"))
	send(callMsg("6", "wait", "{}"))
	f.wait(t, `"id":1`) // not cancelled before it began
	time.Sleep(10 * time.Millisecond)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	send(callMsg("7", "wait", "{}"))
	send(`{"jsonrpc":"2.0","id":8,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	f.wait(t, `"id":1,"result"`)
	f.wait(t, "subscriptions/acknowledged")

	check := func(id string, want engine.EndReason, code codec.Code, rt string, toolErr bool) record {
		t.Helper()
		r := rec.waitEnd(t, id)
		if !r.started || r.o.Reason != want || r.o.Code != code || r.o.ResultType != rt || r.o.ToolError != toolErr {
			t.Errorf("call %s (%s %s): outcome %+v, want %v code %d resultType %q toolError %v", id, r.method, r.name, r.o, want, code, rt, toolErr)
		}
		if r.value != "attached:"+id {
			t.Errorf("call %s: CallEnd saw value %v", id, r.value)
		}
		return r
	}
	check("1", engine.EndOK, 0, "complete", false)
	if !strings.Contains(f.wait(t, `"id":1,`), "echo attached:1") {
		t.Errorf("the handler did not see the value CallStart attached")
	}
	check("2", engine.EndError, codec.CodeInvalidParams, "", false)
	check("3", engine.EndOK, 0, "complete", true)
	check("4", engine.EndOK, 0, "input_required", false)
	check("5", engine.EndTimeout, codec.CodeInternalError, "", false)
	r6 := check("6", engine.EndCancelled, 0, "", false)
	if r6.o.Cause == nil || errors.Is(r6.o.Cause, engine.ErrDisconnected) {
		t.Errorf("cancelled call: cause %v", r6.o.Cause)
	}

	m.Close() // the peer goes away: 7 is a disconnect, the listen stream too
	r7 := check("7", engine.EndDisconnect, 0, "", false)
	if !errors.Is(r7.o.Cause, engine.ErrDisconnected) {
		t.Errorf("disconnect cause %v", r7.o.Cause)
	}
	r8 := check("8", engine.EndDisconnect, 0, "", false)
	if !r8.listenStart || !r8.listenEnd {
		t.Errorf("listen hooks: start %v end %v", r8.listenStart, r8.listenEnd)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestHooksShutdown: a listen stream completed by Shutdown ends with
// EndShutdown and its final result; a request refused because Shutdown
// began is EndShutdown with -32603.
func TestHooksShutdown(t *testing.T) {
	rec := newRecorder()
	srv := hookServer(t, engine.Config{Hooks: rec.hooks()})
	f := newFrames()
	m := linestream.NewMem(engine.NewScope(srv, ""), f.deliver, linestream.Config{}, nil)
	defer m.Close()
	_ = m.Send([]byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`))
	f.wait(t, "subscriptions/acknowledged")
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := rec.waitEnd(t, "1")
	if r.o.Reason != engine.EndShutdown || r.o.ResultType != "complete" || !r.listenEnd {
		t.Errorf("listen outcome %+v listenEnd %v", r.o, r.listenEnd)
	}
	_ = m.Send([]byte(callMsg("2", "echo", "{}")))
	r = rec.waitEnd(t, "2")
	if r.o.Reason != engine.EndShutdown || r.o.Code != codec.CodeInternalError {
		t.Errorf("refused outcome %+v", r.o)
	}
}

// TestMiddleware: the chain runs outermost first around every dispatched
// request, sees the principal, and may refuse with a *codec.Error whose
// code and status reach the peer and the hooks.
func TestMiddleware(t *testing.T) {
	var mu sync.Mutex
	var order []string
	trace := func(name string) engine.Middleware {
		return func(next engine.HandlerFunc) engine.HandlerFunc {
			return func(c *engine.Call) error {
				mu.Lock()
				order = append(order, name+">"+c.Method())
				mu.Unlock()
				err := next(c)
				mu.Lock()
				order = append(order, name+"<")
				mu.Unlock()
				return err
			}
		}
	}
	limited := codec.NewError(-32000, "Rate limit exceeded")
	limited.Status = 429
	deny := func(next engine.HandlerFunc) engine.HandlerFunc {
		return func(c *engine.Call) error {
			if c.Principal() == "mallory" {
				return limited
			}
			return next(c)
		}
	}
	rec := newRecorder()
	srv := hookServer(t, engine.Config{Hooks: rec.hooks(), Middleware: []engine.Middleware{trace("a"), deny, trace("b")}})
	defer func() { _ = srv.Shutdown(context.Background()) }()

	f := newFrames()
	m := linestream.NewMem(engine.NewScope(srv, ""), f.deliver, linestream.Config{}, "alice")
	_ = m.Send([]byte(callMsg("1", "echo", "{}")))
	f.wait(t, `"id":1,"result"`)
	m.Close()
	mu.Lock()
	if got := strings.Join(order, " "); got != "a>tools/call b>tools/call b< a<" {
		t.Errorf("order %q", got)
	}
	order = nil
	mu.Unlock()

	g := newFrames()
	m2 := linestream.NewMem(engine.NewScope(srv, ""), g.deliver, linestream.Config{}, "mallory")
	defer m2.Close()
	_ = m2.Send([]byte(callMsg("2", "echo", "{}")))
	if got := g.wait(t, `"id":2`); !strings.Contains(got, `"code":-32000`) || !strings.Contains(got, "Rate limit") {
		t.Errorf("refusal %s", got)
	}
	r := rec.waitEnd(t, "2")
	if r.o.Reason != engine.EndError || r.o.Code != -32000 || r.o.Status != 429 {
		t.Errorf("refused outcome %+v", r.o)
	}
	mu.Lock()
	if got := strings.Join(order, " "); got != "a>tools/call a<" {
		t.Errorf("order after refusal %q", got)
	}
	mu.Unlock()
}

// TestToolFilter: each principal's tools/list shows only its tools, with
// cacheScope "private"; calling a hidden tool answers exactly what an
// unknown tool gets; one principal's list never reaches another.
func TestToolFilter(t *testing.T) {
	filter := func(c *engine.Call, tl *engine.Tool) bool {
		return tl.Name != "secret" || c.Principal() == "admin"
	}
	srv := hookServer(t, engine.Config{ToolFilter: filter, CacheScope: "public"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`

	ask := func(principal any, msgs ...string) []string {
		f := newFrames()
		m := linestream.NewMem(engine.NewScope(srv, ""), f.deliver, linestream.Config{}, principal)
		defer m.Close()
		var out []string
		for i, msg := range msgs {
			_ = m.Send([]byte(msg))
			out = append(out, f.wait(t, fmt.Sprintf(`"id":%d,`, i+1)))
		}
		return out
	}
	admin := ask("admin", list)
	user := ask("user", list,
		strings.Replace(callMsg("2", "secret", "{}"), `"id":2`, `"id":2`, 1),
		callMsg("3", "nosuch", "{}"))
	admin2 := ask("admin", list)

	if !strings.Contains(admin[0], `"name":"secret"`) || !strings.Contains(admin[0], `"name":"echo"`) {
		t.Errorf("admin list %s", admin[0])
	}
	if strings.Contains(user[0], "secret") || !strings.Contains(user[0], `"name":"echo"`) {
		t.Errorf("user list %s", user[0])
	}
	if admin[0] != admin2[0] {
		t.Errorf("admin's list changed after a user's: %s vs %s", admin[0], admin2[0])
	}
	for _, l := range []string{admin[0], user[0]} {
		if !strings.Contains(l, `"cacheScope":"private"`) {
			t.Errorf("filtered list without cacheScope private: %s", l)
		}
	}
	hidden := strings.Replace(strings.Replace(user[1], `"id":2`, `"id":N`, 1), "secret", "X", 1)
	unknown := strings.Replace(strings.Replace(user[2], `"id":3`, `"id":N`, 1), "nosuch", "X", 1)
	if hidden != unknown || !strings.Contains(hidden, "-32602") {
		t.Errorf("hidden tool answer %s differs from unknown tool answer %s", user[1], user[2])
	}
	// The unfiltered server keeps its shared, public list.
	plain := hookServer(t, engine.Config{})
	defer func() { _ = plain.Shutdown(context.Background()) }()
	f := newFrames()
	m := linestream.NewMem(engine.NewScope(plain, ""), f.deliver, linestream.Config{}, nil)
	defer m.Close()
	_ = m.Send([]byte(list))
	if got := f.wait(t, `"id":1`); !strings.Contains(got, `"cacheScope":"public"`) || !strings.Contains(got, "secret") {
		t.Errorf("plain list %s", got)
	}
}

// TestJoinHooks: starts run in order, ends in reverse.
func TestJoinHooks(t *testing.T) {
	var got []string
	mk := func(n string) engine.Hooks {
		return engine.Hooks{
			CallStart: func(*engine.Call) { got = append(got, "start"+n) },
			CallEnd:   func(*engine.Call, engine.Outcome) { got = append(got, "end"+n) },
		}
	}
	h := engine.JoinHooks(mk("1"), engine.Hooks{}, mk("2"))
	h.CallStart(nil)
	h.CallEnd(nil, engine.Outcome{})
	if s := strings.Join(got, " "); s != "start1 start2 end2 end1" {
		t.Errorf("order %q", s)
	}
}

// TestHooksConnInfo: a line connection reported with ConnOpen links its
// calls (Call.Conn, Call.Transport); the stdio and socket drivers do this.
func TestHooksConnInfo(t *testing.T) {
	rec := newRecorder()
	srv := hookServer(t, engine.Config{Hooks: rec.hooks()})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	got := make(chan string, 1)
	_ = srv.AddTool(engine.Tool{Name: "where", Handler: func(c *engine.Call) error {
		got <- fmt.Sprintf("%s %v", c.Transport(), c.Conn().Data)
		c.Text("ok")
		return nil
	}})
	f := newFrames()
	sc := engine.NewScope(srv, "tcp")
	m := linestream.NewMem(sc, f.deliver, linestream.Config{}, nil)
	ci := sc.ConnOpen(nil, nil)
	m.Conn().SetConnInfo(ci)
	_ = m.Send([]byte(callMsg("1", "where", "{}")))
	if s := <-got; s != "tcp conn-data" {
		t.Errorf("handler saw %q", s)
	}
	m.Close()
	sc.ConnClose(ci, nil)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if s := strings.Join(rec.conns, ","); s != "start tcp,end tcp conn-data" {
		t.Errorf("conn hooks %q", s)
	}
}
