package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// window is the number of requests in flight on a line-framed connection,
// as in the stdio rows of `make compare` (-c 1 -w 64).
const window = 64

// BenchmarkStdioEcho: tools/call echo through stdio.ServeConn over two
// os.Pipe pairs (the client's stdin and stdout of a server process, without
// the process), 64 requests in flight.
func BenchmarkStdioEcho(b *testing.B) {
	eng := newEngine(b)
	inR, inW, err := os.Pipe() // client → server
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe() // server → client
	if err != nil {
		b.Fatal(err)
	}
	wait := goServe(func() error {
		return stdio.ServeConn(context.Background(), eng, inR, outW, stdio.Config{})
	})
	p := newPipeliner(inW, outR, window, b.N, func() { _ = inW.Close(); _ = outR.Close() })

	b.ReportAllocs()
	b.ResetTimer()
	runErr := p.run(b.N)
	b.StopTimer()
	reportRate(b, b.N, "req/s")

	// End of input: the server drains and returns.
	_ = inW.Close()
	serveErr := wait()
	_ = outW.Close()
	_ = inR.Close()
	_ = outR.Close()
	shutdownEngine(b, eng.Shutdown)
	if runErr != nil {
		b.Fatal(runErr)
	}
	if serveErr != nil {
		b.Fatalf("stdio.ServeConn: %v", serveErr)
	}
}

// BenchmarkSocketEcho: tools/call echo through transport/socket (gnet event
// loops) on one connection, 64 requests in flight, over loopback TCP and
// over a Unix-domain socket.
func BenchmarkSocketEcho(b *testing.B) {
	b.Run("tcp", func(b *testing.B) { benchSocket(b, "tcp", "127.0.0.1:0") })
	b.Run("unix", func(b *testing.B) { benchSocket(b, "unix", socketPath(b)) })
}

// socketPath is a fresh socket path in b.TempDir, or in a shorter
// temporary directory when that one would pass the sun_path limit.
func socketPath(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "mcp.sock")
	if len(p) < 100 {
		return p
	}
	dir, err := os.MkdirTemp("", "e2e")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "mcp.sock")
}

func benchSocket(b *testing.B, network, addr string) {
	eng := newEngine(b)
	srv := socket.New(eng, socket.Config{})
	if err := srv.Listen(network, addr); err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	a := srv.Addrs()[0]
	conn, err := net.Dial(a.Network(), a.String())
	if err != nil {
		shutdownEngine(b, srv.Shutdown)
		b.Fatal(err)
	}
	p := newPipeliner(conn, conn, window, b.N, func() { _ = conn.Close() })

	b.ReportAllocs()
	b.ResetTimer()
	runErr := p.run(b.N)
	b.StopTimer()
	reportRate(b, b.N, "req/s")

	_ = conn.Close()
	shutdownEngine(b, srv.Shutdown)
	shutdownEngine(b, eng.Shutdown)
	if runErr != nil {
		b.Fatal(runErr)
	}
}

// shutdownEngine calls a Shutdown method with a bounded context and fails
// the benchmark when it does not finish in time.
func shutdownEngine(b *testing.B, shutdown func(context.Context) error) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		b.Errorf("shutdown: %v", err)
	}
}
