package load

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/internal/term"
)

// slot is one place of a stream connection's window. A request's id is
// gen*window + slot index, so a response finds its slot without a map. The
// slot is claimed back with a compare-and-swap on id, so exactly one of the
// reader (response), the sweeper (timeout) or a failing sender completes it.
// The plain fields are written by the sender before it stores id and read
// by whoever claims id back (the atomic store and CAS order them).
type slot struct {
	id       atomic.Int64 // in-flight request id; 0 when free
	progress atomic.Int32 // progress notifications so far (reader)
	tpl      int32
	start    int64 // due (open loop) or send time
	meas     bool
	gen      int64 // requests sent in this slot; owned by whoever holds the slot
	pubK     int64 // listen: the publish index of the touch in flight
	_        [8]byte
}

// inlineMaxBytes bounds the requests a reader may write itself: its write
// must never wait for a server that is itself waiting for the reader to
// read. With at most the window's requests unread by the server, a window
// whose requests fit in this many bytes fits in any pipe or socket buffer.
const inlineMaxBytes = 32 << 10

// streamConn is one newline-delimited JSON-RPC connection: a stdio child
// process, a TCP or a Unix socket (STD-02, CUST-04).
type streamConn struct {
	r   *run
	idx int
	win int64

	slots []slot
	free  chan int32
	out   lineOut
	rd    io.Reader        // the input, when a reader goroutine reads it
	dec   *framing.Decoder // frames the input (reader goroutine or poller)
	rec   *recorder        // owned by the reader goroutine
	tally tally            // the live counts of the batch being read
	shape replyShapes      // owned by the reader goroutine
	ready []int32          // inline: slots answered in the batch being read

	oobTimeout atomic.Int64 // measured timeouts (sweeper)
	oobIO      atomic.Int64 // measured requests lost to a broken connection (sender)

	dead      chan struct{} // closed when the reader goroutine ends
	ended     atomic.Bool   // set before the reader gives back what was in flight
	readErr   error
	stopSweep chan struct{}
	sweepDone chan struct{}

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *term.LineWriter // the server's stderr, escaped, to the run's log
	nc     net.Conn
	// A socket read by a poller instead of a reader goroutine.
	fd *fdConn

	pub *pubLog // listen: the log of touches sent on this connection

	// inline: a closed loop where the reader (goroutine or poller) sends
	// the next requests itself: it handles every line one read brought,
	// then refills the slots they freed and writes the new requests in one
	// write (no hand-off to the sender, which then only starts the loop and
	// refills slots freed by timeouts). One read and one write per batch.
	inline bool
	snd    sendState // the sender goroutine's
	rsnd   sendState // the reader's (inline)
	// lines, when the requests are built in place (inlineLines): each
	// slot's last line, owned like the slot's gen by whoever holds it.
	lines []slotLine
}

// sendState is what one goroutine sending on a stream connection owns: the
// batch of requests it has queued and not yet written.
type sendState struct {
	pos    int // position in the mix cycle
	idBuf  []byte
	wbuf   []byte   // the batch's lines
	batch  []queued // the batch's requests
	seqBuf []byte   // listen, unique URIs: the publish's sequence number
}

// queued is a request of a batch, to give back if the write fails.
type queued struct {
	k    int32
	meas bool
	id   int64
}

func newSendState(pos int, win int64, lineLen int) sendState {
	return sendState{pos: pos, idBuf: make([]byte, 0, 24),
		wbuf: make([]byte, 0, min(int(win)*lineLen, 64<<10)), batch: make([]queued, 0, min(win, 1<<10))}
}

// newStreamConn sets up connection i's state, without its input and output.
func (r *run) newStreamConn(i int) *streamConn {
	c := &streamConn{
		r: r, idx: i, win: int64(r.cfg.Inflight),
		rec:       newRecorder(),
		dead:      make(chan struct{}),
		stopSweep: make(chan struct{}),
		sweepDone: make(chan struct{}),
		snd:       newSendState(i*7, int64(r.cfg.Inflight), r.maxRequestLen()),
		dec:       framing.NewDecoder(framing.ReaderConfig{MaxLine: -1}),
		// A closed loop (a listen run's touches go at the publish rate)
		// whose window of requests fits in a socket or pipe buffer.
		inline: r.cfg.Rate <= 0 && r.cfg.Workload != WorkloadListen &&
			int64(r.cfg.Inflight)*int64(r.maxRequestLen()) <= inlineMaxBytes,
	}
	if c.inline {
		c.rsnd = newSendState(i*7+3, c.win, r.maxRequestLen())
		c.ready = make([]int32, 0, c.win)
	}
	if c.inlineLines() {
		c.lines = make([]slotLine, c.win)
	}
	c.slots = make([]slot, c.win)
	c.free = make(chan int32, c.win)
	for k := range c.win {
		c.free <- int32(k)
	}
	return c
}

// openStream starts the process or dials the socket for connection i.
func (r *run) openStream(i int) (*streamConn, error) {
	c := r.newStreamConn(i)
	var rd io.Reader
	var wr io.Writer
	switch r.t.kind {
	case "stdio":
		cmd := exec.Command(r.t.argv[0], r.t.argv[1:]...)
		// The server's stderr, line by line, escaped and marked as its
		// own: it may carry terminal escapes (RELIABILITY F7).
		c.stderr = &term.LineWriter{W: r.log, Prefix: fmt.Sprintf("server %d: ", i)}
		cmd.Stderr = c.stderr
		// A grandchild may keep the server's stderr open after the server
		// has exited; Wait then stops copying after this long instead of
		// waiting for an end of file that never comes.
		cmd.WaitDelay = stderrWaitDelay
		var stdin io.WriteCloser
		var stdout io.ReadCloser
		var childEnds func()
		var err error
		if c.blockingReads() {
			stdin, stdout, childEnds, err = blockingPipes(cmd)
		}
		if childEnds == nil {
			if stdin, err = cmd.StdinPipe(); err != nil {
				return nil, err
			}
			if stdout, err = cmd.StdoutPipe(); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, err
		}
		err = cmd.Start()
		if childEnds != nil {
			childEnds() // the child's copies, or, if it did not start, all
		}
		if err != nil {
			if childEnds != nil {
				stdin.Close()
				if u, ok := stdout.(interface{ closeUnread() }); ok {
					u.closeUnread()
				}
			}
			return nil, fmt.Errorf("start %s: %w", r.t.argv[0], err)
		}
		c.cmd, c.stdin, c.stdout = cmd, stdin, stdout
		rd, wr = stdout, stdin
	default:
		if c.blockingReads() {
			// A socket of our own, read and written in blocking system
			// calls by its reader goroutine.
			fd, err := dialFD(r.t.kind, r.t.addr, r.cfg.Timeout)
			if err != nil {
				return nil, err
			}
			c.fd = fd
			c.rd = fdReader{fd}
			c.out.w = countWriter{fd, &r.bytesOut}
			go c.readLoop()
			go c.sweep()
			return c, nil
		}
		if c.inline && canPoll {
			if err := c.openPolled(); err != nil {
				return nil, err
			}
			return c, nil
		}
		nc, err := net.DialTimeout(r.t.kind, r.t.addr, r.cfg.Timeout)
		if err != nil {
			return nil, err
		}
		c.nc = nc
		rd, wr = nc, nc
	}
	c.rd = rd
	c.out.w = countWriter{wr, &r.bytesOut}
	go c.readLoop()
	go c.sweep()
	return c, nil
}

// blockingReads reports whether the connection is read by a goroutine of
// its own blocked in read(2) on a descriptor outside Go's network poller:
// an inline connection (its reader also writes, see inlineMaxBytes) of a
// run with fewer connections than Ps. Per batch that is one read and one
// write and no wake-up through the network poller (which for a lone
// connection costs more than the batch's own work). A goroutine blocked in
// a system call keeps its P until sysmon takes it back (up to 10 ms when
// sysmon is idle), so one P is always left to the other goroutines (the
// sender, the sweeper, the progress line). Otherwise a few pollers read the
// sockets (poll_linux.go).
func (c *streamConn) blockingReads() bool {
	return c.inline && canPoll && c.r.cfg.Conns < runtime.GOMAXPROCS(0) && c.r.cfg.Workload != WorkloadListen
}

// openPolled dials an inline socket and hands its reading to a poller.
func (c *streamConn) openPolled() error {
	r := c.r
	fd, err := dialFD(r.t.kind, r.t.addr, r.cfg.Timeout)
	if err != nil {
		return err
	}
	p, err := r.pollerFor(c.idx)
	if err != nil {
		_ = fd.close()
		return err
	}
	c.fd = fd
	c.out.w = countWriter{fd, &r.bytesOut}
	if err := p.add(int32(c.idx), fd, c); err != nil {
		_ = fd.close()
		return err
	}
	go c.sweep()
	return nil
}

// readLoop demultiplexes everything the server writes: responses by id,
// progress by token, subscription traffic by subscriptionId (STD-08). Each
// read is one batch: its lines are handled, then (inline) the requests that
// replace the answered ones leave in one write.
func (c *streamConn) readLoop() {
	defer close(c.dead)
	var env codec.Envelope
	buf := framing.AcquireBuf(framing.DefaultReadSize)
	buf = buf[:cap(buf)]
	var yieldAt int64
	for {
		n, err := c.rd.Read(buf)
		if n > 0 {
			c.r.bytesIn.Add(int64(n))
			c.dec.Feed(buf[:n])
			if now := c.frames(&env); now >= yieldAt {
				gosched() // see yieldEvery
				yieldAt = now + yieldEvery
			}
		}
		if err != nil {
			c.ended.Store(true) // nothing more is sent on it
			c.dec.End()
			c.frames(&env)
			c.readErr = err
			break
		}
	}
	c.lost()
	c.dec.Release()
	framing.ReleaseBuf(buf)
}

// yieldEvery is how often (ns) a reader goroutine blocked in read(2)
// between batches goes through the scheduler. Such a goroutine keeps its P
// through its system calls and is never descheduled; once sysmon sees the P
// on the same scheduling tick for 10 ms it asks for a preemption (SIGURG to
// the thread) and takes the P away, and as getting the P back at the end of
// a system call does not advance the tick, it keeps doing so with its sleep
// held at 20 µs (4,200–5,900 nanosleeps per 2 s of a 1×64 run). A Gosched
// every few milliseconds advances the tick: no signal, no hand-off, and
// sysmon backs off to its 10 ms sleep (about 190 per 2 s).
const yieldEvery = int64(4 * time.Millisecond)

// gosched is runtime.Gosched (a variable so that a test can count calls).
var gosched = runtime.Gosched

// frames handles every complete line the decoder holds, all received by
// one read (one clock reading for all of them), then sends the requests
// that replace the answered ones, in one write. It returns its clock
// reading.
func (c *streamConn) frames(env *codec.Envelope) int64 {
	now := c.r.now()
	// Replies of a known shape are taken where they stand, until one line
	// is not: the rest of the batch is split into lines first (a server
	// whose replies all differ would pay for both).
	inPlace := c.shape.n > 0
	for {
		if inPlace {
			if rest := c.dec.Rest(); len(rest) > 0 {
				if sh, id, n := c.shape.matchLine(rest); sh != nil && c.dec.TakeLine(n) != nil {
					c.shaped(sh, id, now)
					continue
				}
				inPlace = false
			}
		}
		frame, err := c.dec.Next()
		if err == framing.ErrLineTooLong {
			continue
		}
		if frame == nil {
			break
		}
		c.onFrame(frame, env, now)
	}
	c.rec.flushTally(&c.tally)
	if len(c.ready) > 0 {
		c.refill()
	}
	return now
}

// refill sends a request in every slot answered in this batch (inline),
// queued and written together; a slot the run has no request for goes back.
func (c *streamConn) refill() {
	s := c.r.sched
	now := s.now()
	for _, k := range c.ready {
		if meas, ok := s.nextAt(now); ok && !c.ended.Load() {
			c.queue(&c.rsnd, k, now, now, meas)
		} else {
			c.free <- k
		}
	}
	c.ready = c.ready[:0]
	c.flush(&c.rsnd)
}

// onFrame handles one line from the server (reader side), received at now.
func (c *streamConn) onFrame(frame []byte, env *codec.Envelope, now int64) {
	r := c.r
	if sh, id := c.shape.match(frame); sh != nil {
		c.shaped(sh, id, now)
		return
	}
	if codec.Peek(frame, env) != nil {
		return
	}
	switch env.Kind {
	case codec.KindResponse:
		if env.IDKind == codec.IDString {
			if st := r.streamOn(env.ID, c); st != nil {
				r.streamEnd(st, env, frame)
			}
			return
		}
		id, ok := parseInt(env.ID)
		if env.IDKind != codec.IDNumber || !ok || id < c.win {
			return
		}
		c.shape.learn(frame, env)
		k := int32(id % c.win)
		sl := &c.slots[k]
		if !sl.id.CompareAndSwap(id, 0) {
			return // answered after its timeout
		}
		out, code := classify(frame, env, r.tpls[sl.tpl].isCall)
		c.answered(k, sl, now, out, code)
	case codec.KindNotification:
		if env.Method.EqualString("notifications/progress") {
			raw, ok := codec.LookupPath(env.Params, "progressToken")
			if !ok {
				return
			}
			tok, ok := parseInt(raw)
			if !ok || tok < c.win {
				return
			}
			if sl := &c.slots[tok%c.win]; sl.id.Load() == tok {
				sl.progress.Add(1)
			}
			return
		}
		r.streamNote(nil, env, frame, now, c)
	}
}

// shaped handles a reply of shape sh with id (the same text as a response
// checked in full, but for the id), received at now.
func (c *streamConn) shaped(sh *replyShape, id, now int64) {
	if id < c.win {
		return
	}
	k := int32(id % c.win)
	sl := &c.slots[k]
	if sl.id.CompareAndSwap(id, 0) {
		out, code := sh.outcome(c.r.tpls[sl.tpl].isCall)
		c.answered(k, sl, now, out, code)
	}
}

// answered records the response to the request of slot k, which the caller
// has claimed back, and frees the slot (inline: for this batch's refill).
func (c *streamConn) answered(k int32, sl *slot, now int64, out int, code int64) {
	if out != outOK {
		c.pubFailed(sl)
	}
	c.rec.finishBatched(&c.tally, sl.meas, sl.start, now, out, code, int(sl.progress.Load()))
	if c.inline {
		c.ready = append(c.ready, k)
		return
	}
	c.free <- k
}

// pubFailed marks the touch in slot sl, claimed back by the caller, failed
// (listen): an error reply, a timeout or a lost connection.
func (c *streamConn) pubFailed(sl *slot) {
	if c.pub != nil {
		c.pub.fail(sl.pubK)
	}
}

// lost completes what is in flight on a connection whose input has ended.
func (c *streamConn) lost() {
	c.ended.Store(true)
	for k := range c.slots {
		sl := &c.slots[k]
		if id := sl.id.Load(); id != 0 && sl.id.CompareAndSwap(id, 0) {
			c.rec.finish(sl.meas, sl.start, c.r.now(), outIO, 0, 0)
			c.pubFailed(sl)
			c.free <- int32(k)
		}
	}
}

// sweep times out requests that have waited longer than the timeout and
// cancels them on the wire (TMO-01, STD-10).
func (c *streamConn) sweep() {
	defer close(c.sweepDone)
	timeout := int64(c.r.cfg.Timeout)
	tick := min(max(time.Duration(timeout)/10, time.Millisecond), 100*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	var buf []byte
	// The sender stores no send time: a request expires once the sweeper
	// has seen the same id in its slot for the whole timeout (so between
	// the timeout and the timeout plus two ticks after it was sent).
	seenID := make([]int64, len(c.slots))
	seenAt := make([]int64, len(c.slots))
	for {
		select {
		case <-t.C:
		case <-c.stopSweep:
			return
		}
		now := c.r.now()
		for k := range c.slots {
			sl := &c.slots[k]
			id := sl.id.Load()
			if id == 0 {
				continue
			}
			if id != seenID[k] {
				seenID[k], seenAt[k] = id, now
				continue
			}
			if now-seenAt[k] < timeout || !sl.id.CompareAndSwap(id, 0) {
				continue
			}
			if sl.meas {
				c.oobTimeout.Add(1)
			}
			c.rec.live.fail(sl.meas)
			c.pubFailed(sl)
			buf = append(buf[:0], cancelledPrefix...)
			buf = strconv.AppendInt(buf, id, 10)
			buf = append(buf, cancelledSuffix...)
			buf = append(buf, '\n')
			_ = c.out.write(buf)
			c.free <- int32(k)
		}
	}
}

// sendLoop sends requests with up to win in flight until the scheduler
// ends the run. In a closed loop every slot that is free when the sender
// looks is filled, and the requests leave in one write (a pipelining
// client); in an open loop each leaves when it is due. Inline, the sender
// only starts the loop and refills the slots freed by timeouts.
func (c *streamConn) sendLoop() {
	r := c.r
	s := r.sched
	ss := &c.snd
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var now int64
	for {
		var k int32
		var start int64
		var meas, ok bool
		if s.rate <= 0 {
			// Closed loop: a request starts when a slot is free; the slots
			// free together leave in one write, with one clock reading.
			select {
			case k = <-c.free:
			default:
				if len(ss.batch) > 0 && !c.flush(ss) {
					return
				}
				select {
				case k = <-c.free:
				case <-c.dead:
					return
				case <-s.done:
					return
				}
			}
			if len(ss.batch) == 0 {
				now = s.now()
			}
			start = now
			if meas, ok = s.nextAt(now); !ok || c.ended.Load() {
				// The run is over, or the server closed the connection (a
				// request sent now would only time out).
				c.free <- k
				c.flush(ss)
				return
			}
			c.queue(ss, k, start, now, meas)
			continue
		}
		// Open loop: the request is due at start, whether a slot is free
		// or not; waiting for one is part of its latency.
		if start, meas, ok = s.next(timer); !ok {
			return
		}
		select {
		case k = <-c.free:
		case <-c.dead:
			if meas {
				c.oobIO.Add(1)
			}
			return
		}
		if s.late() {
			// Every slot stayed busy until the window closed.
			s.unsend(meas)
			c.free <- k
			return
		}
		c.queue(ss, k, start, s.now(), meas)
		if !c.flush(ss) {
			return
		}
	}
}

// queue puts a request in slot k and appends it to ss's batch, which flush
// writes. start is when it was due (closed loop: now), now its send time.
func (c *streamConn) queue(ss *sendState, k int32, start, now int64, meas bool) {
	r := c.r
	ti := r.pickIndex(&ss.pos)
	sl := &c.slots[k]
	sl.gen++
	id := sl.gen*c.win + int64(k)
	if r.sched.rate <= 0 {
		start = now
	}
	sl.start = start
	sl.meas = meas
	sl.tpl = int32(ti)
	if sl.progress.Load() != 0 {
		sl.progress.Store(0)
	}
	if c.pub != nil {
		sl.pubK = c.pub.n.Load() // before the id: a reader claims the slot by it
	}
	if c.lines != nil {
		// Before the id too: the slot's next holder (the reader, or the
		// sweeper and then the sender) gets the line with the slot.
		ss.wbuf = append(ss.wbuf, c.lines[k].line(r.tpls, ti, id, c.win)...)
	}
	sl.id.Store(id)
	if c.pub != nil {
		if r.tpls[ti].seqGap > 0 {
			// Unique URIs: the publish's index in the log names its URI.
			ss.seqBuf = strconv.AppendInt(ss.seqBuf[:0], sl.pubK, 10)
		}
		c.pub.add(now, meas)
	}
	if c.lines == nil {
		ss.idBuf = strconv.AppendInt(ss.idBuf[:0], id, 10)
		ss.wbuf = append(r.tpls[ti].appendBodySeq(ss.wbuf, ss.idBuf, ss.seqBuf), '\n') // seqBuf: unused without a sequence gap
	}
	ss.batch = append(ss.batch, queued{k: k, id: id, meas: meas})
}

// flush writes ss's batch with one write. When the write fails it gives
// back the slots of the batch not claimed otherwise and reports false: the
// connection can no longer send.
func (c *streamConn) flush(ss *sendState) bool {
	if len(ss.batch) == 0 {
		return true
	}
	err := c.out.write(ss.wbuf)
	if err != nil {
		for _, q := range ss.batch {
			if c.slots[q.k].id.CompareAndSwap(q.id, 0) {
				if q.meas {
					c.oobIO.Add(1)
				}
				c.rec.live.fail(q.meas)
				c.pubFailed(&c.slots[q.k])
				c.free <- q.k
			}
		}
	}
	ss.wbuf = ss.wbuf[:0]
	ss.batch = ss.batch[:0]
	return err == nil
}

// stderrWaitDelay bounds how long shutdown waits, once the server process
// has exited, for the rest of its stderr.
const stderrWaitDelay = time.Second

// drain waits until every slot is back (answered, timed out or failed).
func (c *streamConn) drain() {
	deadline := time.NewTimer(c.r.cfg.Timeout + 2*time.Second)
	defer deadline.Stop()
	for range c.win {
		select {
		case <-c.free:
		case <-deadline.C:
			return
		}
	}
}

// writeFrame sends a frame outside the request path (listen, cancel).
func (c *streamConn) writeFrame(b []byte) error { return c.out.writeLine(b) }

// shutdown ends the connection: for stdio, close the child's stdin and
// wait for it to exit, then SIGTERM, then SIGKILL (STD-11); for sockets,
// half-close and wait for the server to close its side.
func (c *streamConn) shutdown(grace time.Duration) error {
	close(c.stopSweep)
	<-c.sweepDone
	c.out.close()
	var err, stuck error
	if c.cmd != nil {
		c.stdin.Close()
		if !waitClosed(c.dead, grace) {
			// Where SIGTERM cannot be sent (Windows), go on to Kill at once.
			if c.cmd.Process.Signal(syscall.SIGTERM) != nil || !waitClosed(c.dead, 2*time.Second) {
				_ = c.cmd.Process.Kill()
				if !waitClosed(c.dead, 2*time.Second) {
					// A grandchild holds the pipe.
					stuck = wakeReader(c.stdout, c.dead)
				}
			}
		}
		err = c.cmd.Wait()
		_ = c.stderr.Close() // the copy has ended: write an unfinished last line
		var ee *exec.ExitError
		if errors.Is(err, exec.ErrWaitDelay) {
			err = fmt.Errorf("server process %d exited, but another process still holds its stderr open: stopped reading it", c.idx)
		} else if errors.As(err, &ee) && !ee.Exited() {
			err = fmt.Errorf("server process %d: %v", c.idx, ee)
		} else if err != nil {
			err = fmt.Errorf("server process %d: %w", c.idx, err)
		}
		if stuck != nil {
			err = errors.Join(fmt.Errorf("server process %d: another process holds its stdout open, and the reader could not be woken (it is left blocked): %w", c.idx, stuck), err)
		}
	} else if c.fd != nil {
		_ = c.fd.closeWrite()
		if !waitClosed(c.dead, grace) {
			_ = c.fd.closeBoth() // the poller then reads the end
			<-c.dead
		}
		_ = c.fd.close() // the poller has released c.dec
	} else {
		if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
			waitClosed(c.dead, grace)
		}
		c.nc.Close()
		<-c.dead
	}
	return err
}

// wakeReader closes rd, the stdout of a server process whose pipe another
// process still holds, so that the reader blocked on it returns, and waits
// for dead (the reader's end). Closing can fail (pipeReader opens a write
// end of the pipe to wake the read, which needs a free descriptor): it is
// tried again for wakeTries × wakeWait, then wakeReader gives up and
// returns the error rather than wait for a read nothing will end.
func wakeReader(rd io.Closer, dead chan struct{}) error {
	err := rd.Close()
	for i := 0; err != nil && i < wakeTries; i++ {
		if waitClosed(dead, wakeWait) {
			return nil
		}
		err = rd.Close()
	}
	if err != nil {
		return err
	}
	<-dead
	return nil
}

// wakeTries and wakeWait bound wakeReader's retries (variables for a test).
var (
	wakeTries = 20
	wakeWait  = 100 * time.Millisecond
)

func waitClosed(ch chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// timeouts and lost requests counted outside the reader's recorder.
func (c *streamConn) mergeOOB() {
	if n := c.oobTimeout.Load(); n > 0 {
		c.rec.errs.named[errTimeout] += n
		c.rec.requests += n
	}
	if n := c.oobIO.Load(); n > 0 {
		c.rec.errs.named[errIO] += n
		c.rec.requests += n
	}
}
