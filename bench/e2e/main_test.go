package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpwire/mcpwire/engine"
)

// TestMain fails the run when a benchmark leaves goroutines behind. The
// two fasthttp goroutines ignored here are not ours to end: the server-date
// ticker is process-wide, and a stopped server's worker-pool cleaner only
// notices the stop after its idle-worker sleep (10 s by default).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		// gnet's package-level goroutine pool (ants), started when gnet is
		// loaded and kept for the life of the process.
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}

// protocolVersion is the revision every request claims in its _meta and
// in the MCP-Protocol-Version header.
const protocolVersion = "2026-07-28"

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + protocolVersion + `","io.modelcontextprotocol/clientCapabilities":{}}`

// echoText is the argument of every echo call; the reply must carry it back.
const echoText = "hello world"

// The tools/call echo request around its id: prefix + id + suffix.
const (
	echoPrefix = `{"jsonrpc":"2.0","id":`
	echoSuffix = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + echoText + `"},` + meta + `}}`
)

// newEngine returns an engine with the inline echo tool: its reply is the
// text argument, copied as it came.
func newEngine(tb testing.TB) *engine.Server {
	tb.Helper()
	eng := engine.New(engine.Config{})
	err := eng.AddTool(engine.Tool{
		Name:   "echo",
		Inline: true,
		Handler: func(c *engine.Call) error {
			b, _ := c.ArgBytes("text")
			c.TextBytes(b)
			return nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return eng
}

// stallTimeout bounds one run of a benchmark (a run at -benchtime 2s takes
// a few seconds): past it the client's connections are closed, so that a
// stalled server fails the benchmark instead of hanging it.
const stallTimeout = 45 * time.Second

// reportRate reports count events over the benchmark's measured time as
// unit (req/s, deliveries/s).
func reportRate(b *testing.B, count int, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(count)/s, unit)
	}
}

// pipeliner drives a line-framed connection (stdio pipes, TCP, Unix
// sockets) with up to window echo requests in flight: one goroutine writes
// request lines with their ids spliced in, another reads the replies and
// checks each one (a result carrying the echoed text, an id issued and not
// answered before). Replies may come in any order. Everything it needs is
// allocated by newPipeliner, so that a run allocates only a goroutine.
type pipeliner struct {
	bw     *bufio.Writer
	br     *bufio.Reader
	abort  func() // closes the connection: unblocks a writer stuck after a failure
	window chan struct{}
	seen   []bool // by id: answered
	line   []byte // request scratch
	done   chan error
}

func newPipeliner(w io.Writer, r io.Reader, window, maxN int, abort func()) *pipeliner {
	return &pipeliner{
		bw:     bufio.NewWriterSize(w, 32<<10),
		br:     bufio.NewReaderSize(r, 64<<10),
		abort:  abort,
		window: make(chan struct{}, window),
		seen:   make([]bool, maxN),
		line:   make([]byte, 0, len(echoPrefix)+len(echoSuffix)+24),
		done:   make(chan error, 1),
	}
}

// run sends n requests (ids 0 … n-1; n at most maxN) and waits for their
// n replies.
func (p *pipeliner) run(n int) error {
	if n > len(p.seen) {
		return fmt.Errorf("pipeliner: %d requests, room for %d", n, len(p.seen))
	}
	clear(p.seen[:n])
	var timedOut atomic.Bool
	watchdog := time.AfterFunc(stallTimeout, func() { timedOut.Store(true); p.abort() })
	defer watchdog.Stop()
	go func() {
		err := p.readReplies(n)
		if err != nil {
			if timedOut.Load() {
				err = fmt.Errorf("still running after %v: %w", stallTimeout, err)
			}
			p.abort()
		}
		p.done <- err
	}()
	for i := range n {
		select {
		case p.window <- struct{}{}:
		default:
			// The window is full: push out what is buffered, then wait
			// for a reply, or for the reader to give up.
			if err := p.bw.Flush(); err != nil {
				return p.fail(err)
			}
			select {
			case p.window <- struct{}{}:
			case err := <-p.done:
				return err
			}
		}
		p.line = append(p.line[:0], echoPrefix...)
		p.line = strconv.AppendInt(p.line, int64(i), 10)
		p.line = append(p.line, echoSuffix...)
		p.line = append(p.line, '\n')
		if _, err := p.bw.Write(p.line); err != nil {
			return p.fail(err)
		}
	}
	if err := p.bw.Flush(); err != nil {
		return p.fail(err)
	}
	return <-p.done
}

// fail prefers the reader's error (the cause) to the writer's.
func (p *pipeliner) fail(werr error) error {
	p.abort()
	if rerr := <-p.done; rerr != nil {
		return rerr
	}
	return werr
}

var (
	idKey      = []byte(`"id":`)
	resultKey  = []byte(`"result":`)
	echoQuoted = []byte(`"` + echoText + `"`)
)

func (p *pipeliner) readReplies(n int) error {
	for range n {
		line, err := p.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return fmt.Errorf("reply line longer than %d bytes", p.br.Size())
			}
			return fmt.Errorf("reading replies: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		id, ok := replyID(line)
		if !ok || id < 0 || id >= n || p.seen[id] {
			return fmt.Errorf("reply with an unexpected id: %.200s", line)
		}
		if !bytes.Contains(line, resultKey) || !bytes.Contains(line, echoQuoted) {
			return fmt.Errorf("reply %d is not the echo result: %.200s", id, line)
		}
		p.seen[id] = true
		<-p.window
	}
	return nil
}

// replyID returns the numeric id of a reply line: the first "id" member,
// which the engine writes before the result.
func replyID(line []byte) (int, bool) {
	i := bytes.Index(line, idKey)
	if i < 0 {
		return 0, false
	}
	v, digits := 0, 0
	for _, c := range line[i+len(idKey):] {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int(c-'0')
		digits++
	}
	return v, digits > 0 && digits < 12
}

// goServe runs serve on a goroutine and returns a function that waits for
// it to end and returns its error, nil for the errors listed in ok.
func goServe(serve func() error, ok ...error) (wait func() error) {
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = serve()
		for _, k := range ok {
			if errors.Is(err, k) {
				err = nil
			}
		}
	}()
	return func() error {
		<-done
		return err
	}
}
