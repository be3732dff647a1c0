package engine

import (
	"bytes"
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// countingWriter counts the newline-terminated frames written through it.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

const echoHead = `{"jsonrpc":"2.0","id":`
const echoTail = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`

func echoServer(tb testing.TB) *Server {
	s := New(Options{})
	_ = s.AddTool(Tool{Name: "echo", Handler: func(c *Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	return s
}

// runEcho pushes n echo requests through a StreamConn writing into a
// framing.Writer and waits for n responses.
func runEcho(sc *StreamConn, cw *countingWriter, start, n int, line []byte) {
	base := cw.n.Load()
	for i := start; i < start+n; i++ {
		line = append(line[:0], echoHead...)
		line = strconv.AppendInt(line, int64(i&0xffff), 10)
		line = append(line, echoTail...)
		if err := sc.HandleFrame(line); err != nil {
			panic(err)
		}
	}
	for cw.n.Load() < base+int64(n) {
		time.Sleep(10 * time.Microsecond)
	}
}

// BenchmarkStreamEcho is the engine's echo round trip on a stream
// connection: peek, validate, dispatch to a pooled worker, handler,
// encode, batched write. Target: <= 1 alloc per message.
func BenchmarkStreamEcho(b *testing.B) {
	s := echoServer(b)
	defer func() { _ = s.Shutdown(context.Background()) }()
	cw := &countingWriter{}
	w := framing.NewWriter(cw, framing.WriterOptions{})
	sc := s.NewStreamConn(context.Background(), w, nil)
	defer sc.Close()
	line := make([]byte, 0, 512)
	runEcho(sc, cw, 0, 1000, line) // warm the pools
	b.ReportAllocs()
	b.SetBytes(int64(len(echoHead) + len(echoTail) + 4))
	b.ResetTimer()
	runEcho(sc, cw, 1000, b.N, line)
}
