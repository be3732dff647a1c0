package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine/stdio"
	"github.com/mcpwire/mcpwire/engine/stream"
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
		return stdio.ServeConn(context.Background(), eng, inR, outW, stdio.Options{})
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

// BenchmarkStreamEcho: tools/call echo through engine/stream on one
// connection, 64 requests in flight, over loopback TCP and over a
// Unix-domain socket.
func BenchmarkStreamEcho(b *testing.B) {
	b.Run("tcp", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		benchStream(b, ln)
	})
	b.Run("unix", func(b *testing.B) {
		ln, err := net.Listen("unix", socketPath(b))
		if err != nil {
			b.Fatal(err)
		}
		benchStream(b, ln)
	})
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

func benchStream(b *testing.B, ln net.Listener) {
	eng := newEngine(b)
	srv := stream.New(eng, stream.Options{})
	wait := goServe(func() error { return srv.Serve(ln) }, stream.ErrClosed)
	conn, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		_ = srv.Shutdown(context.Background())
		_ = wait()
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
	serveErr := wait()
	if runErr != nil {
		b.Fatal(runErr)
	}
	if serveErr != nil {
		b.Fatalf("stream.Serve: %v", serveErr)
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
