package linestream

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/cputime"
)

const echoHead = `{"jsonrpc":"2.0","id":`

// echoTail is the standard fixture: tools/call echo {"text":"hello world"}
// whose _meta carries what real clients send, a progressToken included.
const echoTail = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`

// echoTailNoToken is the fixture without its progressToken.
const echoTailNoToken = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

// echoSchema is the reference server's echo schema (internal/refserver).
const echoSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

func echoServer(tb testing.TB, inline bool) *engine.Server {
	return echoServerFull(tb, inline, engine.Config{}, "", false)
}

// echoServerSchema registers echo with schema (default when "") and
// SkipValidation as given.
func echoServerSchema(tb testing.TB, inline bool, schema string, skip bool) *engine.Server {
	return echoServerFull(tb, inline, engine.Config{}, schema, skip)
}

// typedEchoArgs and typedEchoResult mirror the reference server's echo
// (internal/refserver: engine.AddTool with a derived schema, a decode into
// the arguments, structuredContent and the text): the handler the live
// stdio, TCP and Unix rows of make compare run.
type typedEchoArgs struct {
	Text string `json:"text"`
}

type typedEchoResult struct {
	Text string `json:"text"`
}

func (r typedEchoResult) AppendResultText(dst []byte) []byte { return append(dst, r.Text...) }

// typedEchoServer registers echo as the reference server does.
func typedEchoServer(tb testing.TB) *engine.Server {
	s := engine.New(engine.Config{})
	if err := engine.AddTool(s, engine.Tool{Name: "echo", Inline: true}, func(_ *engine.Call, in typedEchoArgs) (typedEchoResult, error) {
		return typedEchoResult(in), nil
	}); err != nil {
		tb.Fatal(err)
	}
	return s
}

func echoServerWith(tb testing.TB, inline bool, opt engine.Config) *engine.Server {
	return echoServerFull(tb, inline, opt, "", false)
}

func echoServerFull(tb testing.TB, inline bool, opt engine.Config, schema string, skip bool) *engine.Server {
	s := engine.New(opt)
	_ = s.AddTool(engine.Tool{Name: "echo", Inline: inline, InputSchema: []byte(schema), SkipValidation: skip, Handler: func(c *engine.Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	return s
}

// benchDriver counts the frames a Conn writes and flushes on a goroutine
// of its own when woken, as the stdio writer does.
type benchDriver struct {
	c     *Conn
	lines atomic.Int64
	wake  chan struct{}
	in    chan struct{}

	mu     sync.Mutex
	cond   sync.Cond
	target int64 // wake the waiter once lines reach it
}

func (d *benchDriver) Write(b []byte) (int, error) {
	n := d.lines.Add(int64(bytes.Count(b, []byte{'\n'})))
	d.mu.Lock()
	if d.target > 0 && n >= d.target {
		d.cond.Signal()
	}
	d.mu.Unlock()
	return len(b), nil
}

// waitLines blocks until n lines were written in all.
func (d *benchDriver) waitLines(n int64) {
	d.mu.Lock()
	d.target = n
	for d.lines.Load() < n {
		d.cond.Wait()
	}
	d.target = 0
	d.mu.Unlock()
}

func (d *benchDriver) WakeOutput() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *benchDriver) WakeInput() {
	select {
	case d.in <- struct{}{}:
	default:
	}
}

func (d *benchDriver) Abort(err error) { panic(err) }

func newBenchConn(s *engine.Server) (*benchDriver, func()) {
	d := &benchDriver{wake: make(chan struct{}, 1), in: make(chan struct{}, 1)}
	d.cond.L = &d.mu
	d.c = New(engine.NewScope(s, ""), d, Config{}, context.Background(), nil)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-d.wake:
				_ = d.c.Flush()
			case <-quit:
				return
			}
		}
	}()
	return d, func() { close(quit); <-done; d.c.Close(nil); d.c.ReleaseInput() }
}

// pipelined builds one chunk of n requests with ids from start, as one
// read from a pipelining client delivers them.
func pipelined(dst []byte, start, n int, tail string) []byte {
	dst = dst[:0]
	for i := start; i < start+n; i++ {
		dst = append(dst, echoHead...)
		dst = strconv.AppendInt(dst, int64(i&0xffff), 10)
		dst = append(dst, tail...)
		dst = append(dst, '\n')
	}
	return dst
}

// roundTrips feeds rounds chunks of window requests each and waits for
// every answer before the next chunk (a client with window requests in
// flight).
func roundTrips(d *benchDriver, rounds, window int, tail string, chunk []byte) []byte {
	for r := 0; r < rounds; r++ {
		base := d.lines.Load()
		chunk = pipelined(chunk, r*window, window, tail)
		for paused := d.c.Feed(chunk); paused; {
			<-d.in
			paused = d.c.Resume()
		}
		d.waitLines(base + int64(window))
	}
	return chunk
}

// BenchmarkStreamEcho is the line core's echo round trip: 64 requests
// arrive in one chunk (one read), are peeked, validated, run, encoded and
// written out. ns/op is per message. Inline runs the handler where the
// chunk was fed; Worker hands it to the engine's pool. Target: <= 1
// allocation per message.
func BenchmarkStreamEcho(b *testing.B) {
	const window = 64
	for _, bc := range []struct {
		name   string
		inline bool
		tail   string
		schema string
		skip   bool
	}{
		{"Inline/progressToken", true, echoTail, "", false},
		{"Inline/noToken", true, echoTailNoToken, "", false},
		{"Worker/progressToken", false, echoTail, "", false},
		{"Worker/noToken", false, echoTailNoToken, "", false},
		// The reference server's echo schema, checked (flat, on the raw
		// bytes), through the library (a minLength the flat check leaves to
		// it), and not checked.
		{"Inline/echoSchema", true, echoTail, echoSchema, false},
		{"Inline/echoSchemaLibrary", true, echoTail, strings.Replace(echoSchema, `"string"`, `"string","minLength":1`, 1), false},
		{"Inline/echoSchemaSkip", true, echoTail, echoSchema, true},
		// The reference server's typed echo (what the live rows run).
		{"Inline/typed", true, echoTail, "typed", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var s *engine.Server
			if bc.schema == "typed" {
				s = typedEchoServer(b)
			} else {
				s = echoServerSchema(b, bc.inline, bc.schema, bc.skip)
			}
			defer func() { _ = s.Shutdown(context.Background()) }()
			d, stop := newBenchConn(s)
			defer stop()
			chunk := roundTrips(d, 20, window, bc.tail, nil) // warm the pools
			rounds := (b.N + window - 1) / window
			b.ReportAllocs()
			b.SetBytes(int64(len(echoHead) + len(bc.tail) + 4))
			b.ResetTimer()
			cpu0 := cputime.Process()
			roundTrips(d, rounds, window, bc.tail, chunk)
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rounds*window), "ns/msg")
			// The process's CPU time per message (the benchmark's feeder
			// and its output side included): what a busy machine moves
			// less than ns/op.
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(rounds*window), "cpu-ns/msg")
		})
	}
}
