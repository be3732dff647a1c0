package socket

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/mcpwire/mcpwire/engine"
	fx "github.com/mcpwire/mcpwire/internal/fixture"
	"github.com/mcpwire/mcpwire/internal/refserver"
)

// benchEngine serves the reference server's echo as the live rows run it:
// typed, with its argument and result types, Inline.
func benchEngine(b *testing.B) *engine.Server {
	s := engine.New(engine.Config{})
	if err := engine.AddTool(s, engine.Tool{Name: "echo", Inline: true}, func(_ *engine.Call, in refserver.EchoArgs) (refserver.EchoResult, error) {
		return refserver.EchoResult(in), nil
	}); err != nil {
		b.Fatal(err)
	}
	return s
}

// bareReply is what the bare gnet server answers every line with: the
// length of the engine's typed echo reply, the request's id spliced in.
var (
	bareHead = []byte(`{"jsonrpc":"2.0","id":`)
	bareTail = []byte(`,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false}}` + "\n")
)

// bareGnet is the ceiling in the benchmark's own harness: a gnet line
// server that splices each request's id into a fixed reply, as
// bench/servers/rawgnet does, with no parsing or dispatch.
type bareGnet struct {
	gnet.BuiltinEventEngine
	booted chan gnet.Engine
	out    []byte // one event loop: OnTraffic calls do not overlap
}

func (s *bareGnet) OnBoot(e gnet.Engine) gnet.Action {
	s.booted <- e
	return gnet.None
}

func (s *bareGnet) OnTraffic(c gnet.Conn) gnet.Action {
	in, _ := c.Peek(-1)
	out := s.out[:0]
	done := 0
	for {
		i := bytes.IndexByte(in[done:], '\n')
		if i < 0 {
			break
		}
		line := in[done : done+i]
		done += i + 1
		id := line[len(bareHead):]
		id = id[:bytes.IndexByte(id, ',')]
		out = append(append(append(out, bareHead...), id...), bareTail...)
	}
	if done > 0 {
		_, _ = c.Discard(done)
	}
	s.out = out
	if len(out) > 0 {
		_, _ = c.Write(out)
	}
	return gnet.None
}

// BenchmarkSocketEcho is the live socket rows in one process: one
// connection, 64 requests in flight (written in one chunk, as a pipelining
// client does), each answered by the typed inline echo through gnet, the
// socket driver and linestream. bare is the same round trip against a gnet
// server that only splices the id into a fixed reply (rawgnet's work), so
// mcpwire minus bare is what serving costs above gnet and the client.
// ns/op is per message; cpu-ns/msg is the process's CPU time per message,
// the client's included. Under cachegrind (profiles/round8.ir.sh) it gives
// the load-independent instructions per message.
func BenchmarkSocketEcho(b *testing.B) {
	for _, network := range []string{"tcp", "unix"} {
		for _, srv := range []string{"mcpwire", "bare"} {
			b.Run(network+"/"+srv, func(b *testing.B) {
				addr := benchServe(b, network, srv)
				benchRoundTrips(b, network, addr)
			})
		}
	}
}

// benchServe starts srv ("mcpwire" or "bare") on network with one event
// loop and returns its address; cleanup stops it.
func benchServe(b *testing.B, network, srv string) string {
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(b.TempDir(), "b.sock")
	}
	if srv == "bare" {
		// gnet does not report the port it bound, so a TCP row picks a
		// free one first; another process may take it before gnet binds,
		// so a failed bind picks again (three tries).
		for try := 0; ; try++ {
			if network == "tcp" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				addr = ln.Addr().String()
				ln.Close()
			}
			s := &bareGnet{booted: make(chan gnet.Engine, 1)}
			done := make(chan error, 1)
			go func() {
				done <- gnet.Run(s, network+"://"+addr, gnet.WithNumEventLoop(1), gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithLogger(gnetLogger{slog.New(slog.DiscardHandler)}))
			}()
			select {
			case e := <-s.booted:
				b.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					_ = e.Stop(ctx)
					<-done
				})
				return addr
			case err := <-done:
				if network != "tcp" || try == 2 {
					b.Fatal(err)
				}
			}
		}
	}
	eng := benchEngine(b)
	s := New(eng, Config{EventLoops: 1})
	if err := s.Listen(network, addr); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { // registered first: a Start that fails still shuts both down
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
	})
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	return s.Addrs()[0].String()
}

func benchRoundTrips(b *testing.B, network, addr string) {
	c, err := net.Dial(network, addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fx.EchoPipeline(b, c, c) // the live rows' request (bench/compare.sh "TCP 1×64")
}
