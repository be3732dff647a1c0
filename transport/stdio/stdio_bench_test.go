package stdio

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/mcpwire/mcpwire/engine"
)

// BenchmarkStdioEcho is the stdio echo round trip through the engine over
// real OS pipes: the client side pipelines b.N requests (window 64) and
// reads the responses; allocations are counted for both sides together.
// Target: <= 1 alloc per message in steady state.
func BenchmarkStdioEcho(b *testing.B) {
	srv := engine.New(engine.Config{})
	_ = srv.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		t, _ := c.ArgBytes("text")
		c.TextBytes(t)
		return nil
	}})
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeConn(context.Background(), srv, inR, outW, Config{}) }()

	const window = 64
	tokens := make(chan struct{}, window)
	br := bufio.NewReaderSize(outR, 64<<10)
	readAll := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := br.ReadSlice('\n'); err != nil {
				b.Error(err)
				return
			}
			<-tokens
		}
	}
	bw := bufio.NewWriterSize(inW, 64<<10)
	line := make([]byte, 0, 512)
	send := func(i int) {
		tokens <- struct{}{}
		line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendInt(line, int64(i&0xffff), 10)
		line = append(line, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n"...)
		_, _ = bw.Write(line)
		if len(tokens) == window || bw.Buffered() > 32<<10 {
			_ = bw.Flush()
		}
	}
	run := func(start, n int) {
		rd := make(chan struct{})
		go func() { readAll(n); close(rd) }()
		for i := start; i < start+n; i++ {
			send(i)
		}
		_ = bw.Flush()
		<-rd
	}
	run(0, 2000) // warm up
	b.ReportAllocs()
	b.ResetTimer()
	run(2000, b.N)
	b.StopTimer()
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	<-done
	_ = srv.Shutdown(context.Background())
	inR.Close()
	outR.Close()
	outW.Close()
}
