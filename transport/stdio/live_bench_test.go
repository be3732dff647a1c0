//go:build linux

package stdio

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"github.com/mcpwire/mcpwire/internal/refserver"
)

// livePipes opens the two pipes of the live stdio row ("mcpwire stdio" in
// bench/compare.sh): the server's input is a blocking pipe read outside the
// network poller (what mcpwire load gives its child, see internal/load's
// blockingPipes), its output a non-blocking pipe on the poller (what
// ProtectStdout makes of a piped stdout). The client's ends are on the
// poller.
func livePipes(b *testing.B) (srvIn, cliIn, srvOut, cliOut *os.File) {
	var in, out [2]int
	if err := unix.Pipe2(in[:], unix.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	if err := unix.Pipe2(out[:], unix.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	// O_NONBLOCK is a flag of each end's own open file: setting it on one
	// end leaves the other blocking.
	for _, fd := range []int{in[1], out[0], out[1]} {
		if err := unix.SetNonblock(fd, true); err != nil {
			b.Fatal(err)
		}
	}
	return os.NewFile(uintptr(in[0]), "srv-in"), os.NewFile(uintptr(in[1]), "cli-in"),
		os.NewFile(uintptr(out[1]), "srv-out"), os.NewFile(uintptr(out[0]), "cli-out")
}

// BenchmarkStdioLive is the live stdio row in one process: the reference
// server's echo (typed, Inline, as mcpwire serve registers it), the
// standard fixture, 64 requests in flight on one pipe pair, written in one
// chunk per round as a pipelining client does, through ServeConn's real
// reader and its non-blocking writes (pipes, not a fake). ns/msg is per
// message; cpu-ns/msg is the process's CPU time per message, the client's
// included. Under cachegrind (profiles/round8.ir.sh) it gives the
// load-independent instructions per message.
func BenchmarkStdioLive(b *testing.B) {
	srv := engine.New(engine.Config{})
	if err := engine.AddTool(srv, engine.Tool{Name: "echo", Inline: true}, func(_ *engine.Call, in refserver.EchoArgs) (refserver.EchoResult, error) {
		return refserver.EchoResult(in), nil
	}); err != nil {
		b.Fatal(err)
	}
	srvIn, cliIn, srvOut, cliOut := livePipes(b)
	if nonBlockingOut(srvOut) == nil {
		b.Fatal("the server's output is not the non-blocking pipe the live row writes")
	}
	done := make(chan error, 1)
	go func() { done <- ServeConn(context.Background(), srv, srvIn, srvOut, Config{}) }()

	fixture.EchoPipeline(b, cliIn, cliOut)

	cliIn.Close() // the server sees EOF and ends
	drained := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, cliOut); close(drained) }()
	select {
	case err := <-done:
		if err != nil {
			b.Error(err)
		}
	case <-time.After(10 * time.Second):
		b.Fatal("ServeConn did not end after its input did")
	}
	srvOut.Close() // the copy sees EOF
	<-drained
	_ = srv.Shutdown(context.Background())
	srvIn.Close()
	cliOut.Close()
}
