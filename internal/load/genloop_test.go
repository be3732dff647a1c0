package load

import (
	"bytes"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// echoReplyHead and echoReplyTail frame the reply of an in-process fake line
// server to the standard fixture: the shape and size of mcpwire's echo
// reply, the request's id token spliced in between (as the raw ceilings of
// bench/servers do with -splice-id).
const (
	echoReplyHead = `{"jsonrpc":"2.0","id":`
	echoReplyTail = `,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"isError":false,` +
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","title":"mcpwire reference server","version":"devel"}}}}` + "\n"
)

// spliceServer is an in-process fake line server written to by a stream
// connection: every request line it is handed becomes one reply line
// (the id token right after the head the requests share, no parsing) in out, which the test
// then feeds to the connection's reader. It allocates nothing once out has
// grown.
type spliceServer struct {
	out      []byte
	requests int
	tail     []byte
	varying  bool // the reply's text is the id too: no two replies alike
}

func (f *spliceServer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		line, rest, _ := bytes.Cut(p, []byte{'\n'})
		p = rest
		// The generator's requests start with the reply's own head.
		if !bytes.HasPrefix(line, []byte(echoReplyHead)) {
			continue
		}
		id := line[len(echoReplyHead):]
		if j := bytes.IndexByte(id, ','); j >= 0 {
			id = id[:j]
		}
		f.out = append(f.out, echoReplyHead...)
		f.out = append(f.out, id...)
		if f.varying {
			f.out = append(f.out, `,"result":{"resultType":"complete","content":[{"type":"text","text":"`...)
			f.out = append(f.out, id...)
			f.out = append(f.out, `"}],"isError":false}}`+"\n"...)
		} else {
			f.out = append(f.out, f.tail...)
		}
		f.requests++
	}
	return n, nil
}

// genLoop is one stream connection of a closed loop (64 in flight, the
// standard fixture) driven step by step on the test's goroutine, with no
// goroutine, socket or process: each step feeds the replies to the last
// batch to the reader side, which checks and records them and writes the
// requests that replace them (inline), which the fake answers.
type genLoop struct {
	c      *streamConn
	srv    *spliceServer
	chunk  []byte
	env    codec.Envelope
	perRun int // requests answered per step
}

func newGenLoop(tb testing.TB, varying bool) *genLoop {
	tb.Helper()
	cfg := Config{Target: "stdio:x", Inflight: 64, Conns: 1, Timeout: time.Minute,
		Workload: WorkloadCall, Tool: DefaultTool, Args: DefaultArgs}
	r := &run{cfg: cfg, t: &target{kind: "stdio"}, base: time.Now()}
	if err := r.buildTemplates(); err != nil {
		tb.Fatal(err)
	}
	r.sched = newSched(r.base, 0, 0, 0, 0, 0) // closed loop, measured, no end
	c := r.newStreamConn(0)
	if !c.inline {
		tb.Fatal("the standard fixture at 64 in flight should be inline")
	}
	srv := &spliceServer{tail: []byte(echoReplyTail), varying: varying}
	c.out.w = srv
	// The sender's first fill: every slot, one write.
	for range c.win {
		c.queue(&c.snd, <-c.free, 0, r.now(), true)
	}
	if !c.flush(&c.snd) {
		tb.Fatal("first write failed")
	}
	return &genLoop{c: c, srv: srv, perRun: int(c.win)}
}

// step hands the connection every reply pending at the fake, as one read.
func (g *genLoop) step() {
	g.chunk, g.srv.out = g.srv.out, g.chunk[:0]
	g.c.dec.Feed(g.chunk)
	g.c.frames(&g.env)
}

// TestGenLoopAnswersEveryRequest: the inline loop sends a new request for
// every reply, with ids the fake echoes back, and every reply is matched
// and recorded as a success (the first checked in full, the others against
// its shape).
func TestGenLoopAnswersEveryRequest(t *testing.T) {
	g := newGenLoop(t, false)
	for range 10 {
		g.step()
	}
	rec := g.c.rec
	if rec.requests != 640 || rec.answered != 640 || rec.live.errs.Load() != 0 {
		t.Fatalf("requests %d answered %d errors %d, want 640 640 0", rec.requests, rec.answered, rec.live.errs.Load())
	}
	if g.srv.requests != 640+64 {
		t.Fatalf("server saw %d requests, want %d", g.srv.requests, 640+64)
	}
	if g.c.shape.n != 1 {
		t.Errorf("%d reply shapes learnt, want 1", g.c.shape.n)
	}
}

// TestStreamGeneratorAllocs: in steady state a request of the pipelined
// stream generator (reply read, matched by id, checked, recorded; the next
// request built and written in the batch) allocates nothing.
func TestStreamGeneratorAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	g := newGenLoop(t, false)
	for range 20 { // buffers and the histogram's counts grow once
		g.step()
	}
	allocs := testing.AllocsPerRun(200, g.step)
	if allocs != 0 {
		t.Errorf("%v allocations per batch of %d requests", allocs, g.perRun)
	}
	if g.c.rec.live.errs.Load() != 0 {
		t.Errorf("%d errors", g.c.rec.live.errs.Load())
	}
}

// sleepyReader hands a genLoop's reader the fake's pending replies, one
// batch per Read after a millisecond's wait, then io.EOF.
type sleepyReader struct {
	g     *genLoop
	reads int
}

func (s *sleepyReader) Read(b []byte) (int, error) {
	if s.reads == 0 {
		return 0, io.EOF
	}
	s.reads--
	time.Sleep(time.Millisecond)
	n := copy(b, s.g.srv.out)
	s.g.srv.out = s.g.srv.out[:copy(s.g.srv.out, s.g.srv.out[n:])]
	return n, nil
}

// TestReadLoopYields: a reader goroutine that only ever blocks in reads
// goes through the scheduler about every yieldEvery (so that sysmon never
// finds its P on the same tick for 10 ms and takes it away), not once per
// batch.
func TestReadLoopYields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		yields := 0
		old := gosched
		gosched = func() { yields++ }
		defer func() { gosched = old }()
		g := newGenLoop(t, false)
		const batches = 40 // one per millisecond
		g.c.rd = &sleepyReader{g: g, reads: batches}
		g.c.readLoop()
		want := batches * int(time.Millisecond) / int(yieldEvery)
		if yields < want-1 || yields > want+1 {
			t.Errorf("%d yields over %d batches %v apart, want about %d", yields, batches, time.Millisecond, want)
		}
		// The window in flight at the end of the input is lost (outIO).
		if g.c.rec.live.errs.Load() != g.c.win || g.c.rec.answered != batches*g.c.win {
			t.Errorf("answered %d, errors %d; want %d, %d", g.c.rec.answered, g.c.rec.live.errs.Load(), batches*g.c.win, g.c.win)
		}
	})
}

// TestGenLoopSplitReads: a batch of replies cut by the end of a read at
// any byte (the line cut in two is split off by the decoder and matched as
// a whole, the others are taken where they stand) is answered in full.
func TestGenLoopSplitReads(t *testing.T) {
	g := newGenLoop(t, false)
	g.step() // the first reply is checked in full and learnt
	size := len(g.srv.out)
	for i := 0; i <= size; i++ {
		g.chunk, g.srv.out = g.srv.out, g.chunk[:0]
		cut := min(i, len(g.chunk)) // the batch grows as the ids gain digits
		g.c.dec.Feed(g.chunk[:cut])
		g.c.frames(&g.env)
		g.c.dec.Feed(g.chunk[cut:])
		g.c.frames(&g.env)
	}
	rec := g.c.rec
	want := int64(size+2) * g.c.win
	if rec.requests != want || rec.answered != want || rec.live.errs.Load() != 0 {
		t.Fatalf("requests %d answered %d errors %d, want %d %d 0", rec.requests, rec.answered, rec.live.errs.Load(), want, want)
	}
	if g.c.shape.n != 1 {
		t.Errorf("%d reply shapes learnt, want 1", g.c.shape.n)
	}
}
