// Command rawgnet is the ceiling of the socket rows (mcpwire serve --tcp /
// --unix): a minimal gnet/v2 server that answers every complete line with
// the fixed reply of bench/servers/rawtcp (bench/internal/rawreply:
// mcpwire's echo reply), doing no parsing, validation or dispatch. The
// replies to the lines of one OnTraffic call leave in one write, on as many
// event loops as there are CPUs, as mcpwire's socket transport does.
//
//	rawgnet -tcp 127.0.0.1:PORT [-unix /path/to.sock] -splice-id
//
// -splice-id copies each request's "id": token into the reply (a byte search,
// no JSON parsing), as rawtcp does: the load generator matches replies to
// requests by id. SIGUSR1 writes a stats line to stderr (see
// bench/internal/procstats); SIGTERM or SIGINT stops the server (the Unix
// socket file is removed).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/mcpwire/mcpwire/bench/internal/procstats"
	"github.com/mcpwire/mcpwire/bench/internal/rawreply"
)

// maxLine is the longest line answered (as rawtcp's read buffer): the rest
// of a longer one is discarded without an answer.
const maxLine = 64 << 10

type server struct {
	gnet.BuiltinEventEngine
	splice bool
	booted chan gnet.Engine
}

// conn is the per-connection state. The reply buffer is not in it: an
// idle connection holds nothing but gnet's own state.
type conn struct {
	skip bool // inside an over-long line
}

// outPool holds reply buffers, taken for one OnTraffic call (gnet copies
// what the socket does not take at once).
var outPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func (s *server) OnBoot(e gnet.Engine) gnet.Action {
	s.booted <- e
	return gnet.None
}

func (s *server) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	c.SetContext(&conn{})
	return nil, gnet.None
}

// OnTraffic answers every complete line buffered, in one write; a partial
// line stays in gnet's inbound buffer for the next call.
func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	st := c.Context().(*conn)
	in, _ := c.Peek(-1)
	bp := outPool.Get().(*[]byte)
	defer outPool.Put(bp)
	out := (*bp)[:0]
	done := 0
	for {
		i := bytes.IndexByte(in[done:], '\n')
		if i < 0 {
			break
		}
		line := in[done : done+i+1]
		done += i + 1
		if st.skip {
			st.skip = false
			continue
		}
		out = rawreply.Append(out, line, s.splice)
	}
	if len(in)-done > maxLine {
		done, st.skip = len(in), true
	}
	if done > 0 {
		_, _ = c.Discard(done) // Discard(0) would drop everything
	}
	*bp = out
	if len(out) > 0 {
		if _, err := c.Write(out); err != nil {
			return gnet.Close
		}
	}
	return gnet.None
}

func main() {
	tcp := flag.String("tcp", "", "serve on this TCP address (host:port)")
	unix := flag.String("unix", "", "serve on this Unix socket path")
	splice := flag.Bool("splice-id", false, "copy each request's id into its reply (no parsing: first \"id\": token)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("rawgnet: ")
	var addrs []string
	if *tcp != "" {
		addrs = append(addrs, "tcp://"+*tcp)
	}
	if *unix != "" {
		addrs = append(addrs, "unix://"+*unix)
	}
	if len(addrs) == 0 {
		log.Fatal("give -tcp ADDR and/or -unix PATH")
	}
	procstats.OnSignal()
	s := &server{splice: *splice, booted: make(chan gnet.Engine, 1)}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
		e := <-s.booted
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	err := gnet.Rotate(s, addrs,
		gnet.WithMulticore(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(quiet{}),
	)
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// quiet is gnet's logger: errors only, to stderr.
type quiet struct{}

func (quiet) Debugf(string, ...any)          {}
func (quiet) Infof(string, ...any)           {}
func (quiet) Warnf(string, ...any)           {}
func (quiet) Errorf(format string, a ...any) { log.Printf(format, a...) }
func (quiet) Fatalf(format string, a ...any) { log.Fatalf(format, a...) }
