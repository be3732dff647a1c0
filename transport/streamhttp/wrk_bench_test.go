package streamhttp

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/benchfloor"
	"github.com/mcpwire/mcpwire/internal/cputime"
	"github.com/mcpwire/mcpwire/internal/replayconn"
)

// The request `make compare`'s wrk rows send (bench/wrk/fixture.lua): the
// standard fixture, a tools/call of echo with the mirrored headers and a
// progressToken, answered by the reference server's typed, Inline echo.
const wrkFixtureBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`

// wrkRequest is that request as wrk writes it on the wire.
var wrkRequest = []byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: " + strconv.Itoa(len(wrkFixtureBody)) + "\r\n" +
	"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
	"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n\r\n" + wrkFixtureBody)

type benchEchoArgs struct {
	Text string `json:"text"`
}

type benchEchoResult struct {
	Text string `json:"text"`
}

func (r benchEchoResult) AppendResultText(dst []byte) []byte { return append(dst, r.Text...) }

// typedEchoEngine is an engine with the reference server's echo: typed
// (engine.AddTool), Inline.
func typedEchoEngine(tb testing.TB) *engine.Server {
	tb.Helper()
	eng := engine.New(engine.Config{Name: "mcpwire-refserver", Title: "mcpwire reference server", Version: "devel"})
	if err := engine.AddTool(eng, engine.Tool{Name: "echo", Inline: true},
		func(_ *engine.Call, in benchEchoArgs) (benchEchoResult, error) { return benchEchoResult(in), nil }); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = eng.Shutdown(context.Background()) })
	return eng
}

// wrkEchoReply is what the typed echo answers to the wrk request.
const wrkEchoReply = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","title":"mcpwire reference server","version":"devel"}}}}`

// BenchmarkWrkEcho: the server side of one request of the HTTP wrk row
// (64×1, the standard fixture) without the network: fasthttp's connection
// loop reads the request as wrk sends it from an in-memory connection and
// writes the response to it, one request per round, so everything the
// server does per request except the two socket system calls is timed.
// "mcpwire": Serve with the reference server's typed Inline echo, through
// limitListener and limitConn; "rawfast": bench/rawfast's handler (the
// reply's id spliced from the request) on a bare fasthttp.Server, the
// ceiling of the row.
func BenchmarkWrkEcho(b *testing.B) { wrkEchoRows(b, 1) }

// rawfastHandler is bench/rawfast's handler: the reply's id spliced from
// the request.
func rawfastHandler() fasthttp.RequestHandler {
	head := []byte(wrkEchoReply[:len(`{"jsonrpc":"2.0","id":`)])
	tail := []byte(wrkEchoReply[len(`{"jsonrpc":"2.0","id":1`):])
	key := []byte(`"id":`)
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		body := ctx.PostBody()
		i := bytes.Index(body, key)
		tok := body[i+len(key):]
		tok = tok[:bytes.IndexAny(tok, ",}")]
		ctx.Response.AppendBody(head)
		ctx.Response.AppendBody(tok)
		ctx.Response.AppendBody(tail)
	}
}

// connsListener accepts its connections one after the other, then blocks
// until closed.
type connsListener struct {
	mu     sync.Mutex
	cs     []net.Conn
	closed chan struct{}
}

func (l *connsListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.cs) > 0 {
		c := l.cs[0]
		l.cs = l.cs[1:]
		l.mu.Unlock()
		return c, nil
	}
	l.mu.Unlock()
	<-l.closed
	return nil, net.ErrClosed
}
func (l *connsListener) Close() error   { return nil }
func (l *connsListener) Addr() net.Addr { return benchAddr }

// BenchmarkWrkEchoParallel is BenchmarkWrkEcho with GOMAXPROCS
// connections served at once, each by its own fasthttp goroutine, as wrk's
// 64 connections keep every core running handlers: what the server's
// shared state (counters, pools, the limit listener, the engine's tables)
// costs when two cores write it per request. b.N requests in all, split
// over the connections; cpu-ns/op is the process's CPU time per request.
func BenchmarkWrkEchoParallel(b *testing.B) { wrkEchoRows(b, runtime.GOMAXPROCS(0)) }

// wrkEchoRows runs the two rows, mcpwire and rawfast, each serving conns
// in-memory connections at once, b.N requests in all (plus 100 a
// connection), and reports the process's CPU time per request.
func wrkEchoRows(b *testing.B, conns int) {
	run := func(b *testing.B, serve func(net.Listener) error, stop func()) {
		per := b.N/conns + 100
		rcs := make([]*replayconn.Conn, conns)
		ln := &connsListener{closed: make(chan struct{})}
		for i := range rcs {
			rcs[i] = replayconn.New(wrkRequest, per)
			ln.cs = append(ln.cs, rcs[i])
		}
		done := make(chan error, 1)
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := cputime.Process()
		go func() { done <- serve(ln) }()
		for _, rc := range rcs {
			<-rc.Finished
		}
		cpu := cputime.Process() - cpu0
		b.StopTimer()
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(conns*per), "cpu-ns/op")
		close(ln.closed)
		stop()
		<-done
		for _, rc := range rcs {
			if rc.Done != rc.N {
				b.Fatalf("%d responses, want %d", rc.Done, rc.N)
			}
			if !bytes.HasSuffix(rc.First, []byte("\r\n\r\n"+wrkEchoReply)) {
				b.Fatalf("response %q", rc.First)
			}
		}
	}
	b.Run("mcpwire", func(b *testing.B) {
		s := New(typedEchoEngine(b), Config{})
		run(b, func(ln net.Listener) error { return s.Serve(ln) }, func() { _ = s.Shutdown(context.Background()) })
	})
	b.Run("rawfast", func(b *testing.B) {
		srv := &fasthttp.Server{NoDefaultServerHeader: true, Handler: rawfastHandler()}
		run(b, srv.Serve, func() { _ = srv.Shutdown() })
	})
	// The floor (internal/benchfloor): raw fasthttp plus the checks every
	// server must make before it answers, and the reply built from the
	// request; the run's check above holds it to mcpwire's reply bytes.
	b.Run("floor", func(b *testing.B) {
		srv := &fasthttp.Server{NoDefaultServerHeader: true, Handler: benchfloor.Handler(wrkEchoReply)}
		run(b, srv.Serve, func() { _ = srv.Shutdown() })
	})
}
