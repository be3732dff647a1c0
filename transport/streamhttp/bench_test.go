package streamhttp

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/fixture"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// benchEngine is an engine with the EXAMPLES execute_sql tool and echo.
func benchEngine(b testing.TB) *engine.Server {
	b.Helper()
	return benchEngineWith(b, defaultOptions())
}

func benchEngineWith(b testing.TB, opt engine.Config) *engine.Server {
	b.Helper()
	eng := engine.New(opt)
	if err := eng.AddTool(engine.Tool{Name: "execute_sql", InputSchema: json.RawMessage(fixture.ExecuteSQLSchema),
		Handler: func(c *engine.Call) error { c.Text("1 row"); return nil }}); err != nil {
		b.Fatal(err)
	}
	if err := eng.AddTool(fixture.Echo(true)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = eng.Shutdown(context.Background()) })
	return eng
}

// BenchmarkHeaderCheck: the header-vs-body checks of the EXAMPLES §2
// tools/call (MCP-Protocol-Version, Mcp-Method, Mcp-Name and the three
// Mcp-Param-* headers): collecting the six header lines (mirrored.add)
// and Server.check on a Call from engine.Begin, which interleaves them
// with the engine's _meta, version, method, target and capability checks
// (HVAL-02). Target: ≤150 ns, 0 allocs.
func BenchmarkHeaderCheck(b *testing.B) {
	eng := benchEngine(b)
	s := New(eng, Config{})
	body := []byte(fixture.Ex2Body)
	var env codec.Envelope
	if err := codec.Peek(body, &env); err != nil {
		b.Fatal(err)
	}
	hdrs := [][2][]byte{
		{[]byte("MCP-Protocol-Version"), []byte("2026-07-28")},
		{[]byte("Mcp-Method"), []byte("tools/call")},
		{[]byte("Mcp-Name"), []byte("execute_sql")},
		{[]byte("Mcp-Param-Region"), []byte("us-west1")},
		{[]byte("Mcp-Param-Priority"), []byte("42")},
		{[]byte("Mcp-Param-DryRun"), []byte("false")},
	}
	x := s.acquireExchange()
	c := engine.NewScope(eng, "").Begin(context.Background(), body, &env, x, nil)
	x.bind(c, false)
	var m mirrored
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.reset()
		for _, h := range hdrs {
			m.add(h[0], h[1])
		}
		if e := s.check(c, &m, &x.scratch, &x.vals); e != nil {
			b.Fatal(e.Message)
		}
	}
	b.StopTimer()
	c.Fail(codec.ErrParse) // recycle the Call
	x.unref()
}

// nopConn stands in for the connection of a RequestCtx called directly.
type nopConn struct{}

var benchAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}

func (nopConn) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (nopConn) Write(p []byte) (int, error)      { return len(p), nil }
func (nopConn) Close() error                     { return nil }
func (nopConn) LocalAddr() net.Addr              { return benchAddr }
func (nopConn) RemoteAddr() net.Addr             { return benchAddr }
func (nopConn) SetDeadline(time.Time) error      { return nil }
func (nopConn) SetReadDeadline(time.Time) error  { return nil }
func (nopConn) SetWriteDeadline(time.Time) error { return nil }

// echoRequestToken is echoRequest with a progressToken in _meta (the
// standard fixture: real clients send one).
func echoRequestToken() *fasthttp.Request {
	req := echoRequest()
	req.SetBodyString(fixture.ToolsCallProgress("1", "echo", `{"text":"hi"}`, `"tok"`))
	return req
}

// echoRequest is a tools/call of echo as a fasthttp request.
func echoRequest() *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	req.SetRequestURI("http://127.0.0.1:8080/mcp")
	req.Header.SetMethod("POST")
	req.Header.SetHost("127.0.0.1:8080")
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	req.SetBodyString(fixture.ToolsCall("1", "echo", `{"text":"hi"}`))
	return req
}

// echoReply is what the echo call answers, for the raw fasthttp baseline.
var echoReply = []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}}`)

// inMemory serves handler on an in-memory listener and returns a
// keep-alive client for it (one connection, reused).
func inMemory(b *testing.B, serve func(ln net.Listener) error, stop func()) *fasthttp.HostClient {
	b.Helper()
	ln := fasthttputil.NewInmemoryListener()
	done := make(chan error, 1)
	go func() { done <- serve(ln) }()
	b.Cleanup(func() {
		stop()
		_ = ln.Close()
		<-done
	})
	return &fasthttp.HostClient{
		Addr:     "127.0.0.1:8080",
		MaxConns: 1,
		Dial:     func(string) (net.Conn, error) { return ln.Dial() },
	}
}

func runClient(b *testing.B, hc *fasthttp.HostClient, want []byte) {
	b.Helper()
	req := echoRequest()
	defer fasthttp.ReleaseRequest(req)
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	// Warm the connection and the pools.
	for i := 0; i < 100; i++ {
		if err := hc.Do(req, resp); err != nil || resp.StatusCode() != 200 {
			b.Fatalf("warm-up: %v %d %s", err, resp.StatusCode(), resp.Body())
		}
	}
	if want != nil && string(resp.Body()) != string(want) {
		b.Fatalf("reply %s", resp.Body())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := hc.Do(req, resp); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode() != 200 {
			b.Fatalf("status %d", resp.StatusCode())
		}
	}
}

// BenchmarkFastEchoInMemory: a whole tools/call echo through the fasthttp
// front end. "client+server": a keep-alive fasthttp client over an
// in-memory listener (allocations of both sides); "handler": the
// server side alone, the fasthttp handler called on a reused RequestCtx.
// Target: ≤3 allocs per request on the server side.
func BenchmarkFastEchoInMemory(b *testing.B) {
	b.Run("client+server", func(b *testing.B) {
		s := New(benchEngine(b), Config{AllowNonLoopback: true, InsecurePlaintext: true})
		hc := inMemory(b, s.Serve, func() { _ = s.Shutdown(context.Background()) })
		runClient(b, hc, echoReply)
	})
	for _, bc := range []struct {
		name string
		req  func() *fasthttp.Request
	}{{"handler", echoRequest}, {"handler/progressToken", echoRequestToken}} {
		b.Run(bc.name, func(b *testing.B) { benchHandler(b, bc.req) })
	}
}

// handlerCall returns a call of s's fasthttp handler on a reused
// RequestCtx holding req, which fails tb unless the answer is 200, after
// running it 100 times (pools and caches warm), and that RequestCtx.
func handlerCall(tb testing.TB, s *Server, req *fasthttp.Request) (func(), *fasthttp.RequestCtx) {
	ctx := new(fasthttp.RequestCtx)
	ctx.Init2(nopConn{}, nil, true)
	req.CopyTo(&ctx.Request)
	call := func() {
		ctx.Response.Reset()
		s.fastHandler(ctx)
		if ctx.Response.StatusCode() != 200 {
			tb.Fatalf("status %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	for i := 0; i < 100; i++ {
		call()
	}
	return call, ctx
}

// benchHandler calls the fasthttp handler on a reused RequestCtx.
func benchHandler(b *testing.B, newReq func() *fasthttp.Request) {
	{
		s := New(benchEngine(b), Config{})
		if err := s.bindAddr(benchAddr); err != nil {
			b.Fatal(err)
		}
		req := newReq()
		defer fasthttp.ReleaseRequest(req)
		call, ctx := handlerCall(b, s, req)
		if string(ctx.Response.Body()) != string(echoReply) {
			b.Fatalf("reply %s", ctx.Response.Body())
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			call()
		}
	}
}

// BenchmarkRawFasthttpInMemory: the same harness around a bare fasthttp
// handler that answers a fixed reply of the same size: the floor for
// BenchmarkFastEchoInMemory.
func BenchmarkRawFasthttpInMemory(b *testing.B) {
	handler := func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBody(echoReply)
	}
	b.Run("client+server", func(b *testing.B) {
		srv := &fasthttp.Server{Handler: handler, NoDefaultServerHeader: true, NoDefaultContentType: true}
		hc := inMemory(b, srv.Serve, func() { _ = srv.Shutdown() })
		runClient(b, hc, echoReply)
	})
	b.Run("handler", func(b *testing.B) {
		req := echoRequest()
		defer fasthttp.ReleaseRequest(req)
		var ctx fasthttp.RequestCtx
		ctx.Init2(nopConn{}, nil, true)
		req.CopyTo(&ctx.Request)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			ctx.Response.Reset()
			handler(&ctx)
		}
	})
}
