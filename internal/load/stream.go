package load

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
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
type slot struct {
	id       atomic.Int64 // in-flight request id; 0 when free
	start    atomic.Int64 // due (open loop) or send time
	sent     atomic.Int64 // send time, for the timeout
	meas     atomic.Bool
	progress atomic.Int32
	tpl      atomic.Int32
	gen      int64 // requests sent in this slot; owned by whoever holds the slot
	_        [8]byte
}

// streamConn is one newline-delimited JSON-RPC connection: a stdio child
// process, a TCP or a Unix socket (STD-02, CUST-04).
type streamConn struct {
	r   *run
	idx int
	win int64

	slots []slot
	free  chan int32
	fw    *framing.Writer
	fr    *framing.Reader
	rec   *recorder // owned by the reader goroutine

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
	// A relay socket read by a poller instead of a reader goroutine.
	fd  *fdConn
	dec *framing.Decoder

	pub *pubLog // listen: the log of touches sent on this connection

	// relay: a closed loop with one request in flight, where the reader
	// goroutine sends the next request itself as soon as it has read the
	// answer (no hand-off to the sender, which then only starts the loop
	// and refills slots freed by timeouts).
	relay bool
	snd   sendState // the sender goroutine's
	rsnd  sendState // the reader goroutine's (relay)
}

// sendState is what one goroutine sending on a stream connection owns.
type sendState struct {
	pos    int // position in the mix cycle
	idBuf  []byte
	wbuf   []byte
	seqBuf []byte // listen, unique URIs: the publish's sequence number
}

func newSendState(pos int) sendState {
	return sendState{pos: pos, idBuf: make([]byte, 0, 24), wbuf: make([]byte, 0, 4096)}
}

// openStream starts the process or dials the socket for connection i.
func (r *run) openStream(i int) (*streamConn, error) {
	c := &streamConn{
		r: r, idx: i, win: int64(r.cfg.Inflight),
		rec:       newRecorder(),
		dead:      make(chan struct{}),
		stopSweep: make(chan struct{}),
		sweepDone: make(chan struct{}),
		snd:       newSendState(i * 7),
		// A closed loop of one request in flight (a listen run's touches
		// go at the publish rate).
		relay: r.cfg.Inflight == 1 && r.cfg.Rate <= 0 && r.cfg.Workload != WorkloadListen,
	}
	if c.relay {
		c.rsnd = newSendState(i*7 + 3)
	}
	c.slots = make([]slot, c.win)
	c.free = make(chan int32, c.win)
	for k := range c.win {
		c.free <- int32(k)
	}
	var rd io.Reader
	var wr io.Writer
	switch r.t.kind {
	case "stdio":
		cmd := exec.Command(r.t.argv[0], r.t.argv[1:]...)
		// The server's stderr, line by line, escaped and marked as its
		// own: it may carry terminal escapes (RELIABILITY F7).
		c.stderr = &term.LineWriter{W: r.log, Prefix: fmt.Sprintf("server %d: ", i)}
		cmd.Stderr = c.stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", r.t.argv[0], err)
		}
		c.cmd, c.stdin, c.stdout = cmd, stdin, stdout
		rd, wr = stdout, stdin
	default:
		if c.relay && canPoll {
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
	c.fr = framing.NewReader(countReader{rd, &r.bytesIn}, framing.ReaderConfig{MaxLine: -1})
	c.fw = framing.NewWriter(countWriter{wr, &r.bytesOut}, framing.WriterConfig{})
	go c.readLoop()
	go c.sweep()
	return c, nil
}

// openPolled dials a relay socket and hands its reading to a poller.
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
	c.dec = framing.NewDecoder(framing.ReaderConfig{MaxLine: -1})
	c.fw = framing.NewWriter(countWriter{fd, &r.bytesOut}, framing.WriterConfig{})
	if err := p.add(int32(c.idx), fd, c); err != nil {
		_ = fd.close()
		return err
	}
	go c.sweep()
	return nil
}

// readLoop demultiplexes everything the server writes: responses by id,
// progress by token, subscription traffic by subscriptionId (STD-08).
func (c *streamConn) readLoop() {
	defer close(c.dead)
	var env codec.Envelope
	for {
		frame, err := c.fr.Next()
		if err != nil {
			if err == framing.ErrLineTooLong {
				continue
			}
			c.readErr = err
			break
		}
		c.onFrame(frame, &env)
	}
	c.lost()
}

// onFrame handles one line from the server (reader side).
func (c *streamConn) onFrame(frame []byte, env *codec.Envelope) {
	r := c.r
	now := r.now()
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
		k := int32(id % c.win)
		sl := &c.slots[k]
		if !sl.id.CompareAndSwap(id, 0) {
			return // answered after its timeout
		}
		out, code := classify(frame, env, r.tpls[sl.tpl.Load()].isCall)
		c.rec.finish(sl.meas.Load(), sl.start.Load(), now, out, code, int(sl.progress.Load()))
		if c.relay {
			if start, meas, ok := r.sched.next(nil); ok {
				c.send(&c.rsnd, k, start, meas, false)
				return
			}
		}
		c.free <- k
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

// lost completes what is in flight on a connection whose input has ended.
func (c *streamConn) lost() {
	c.ended.Store(true)
	for k := range c.slots {
		sl := &c.slots[k]
		if id := sl.id.Load(); id != 0 && sl.id.CompareAndSwap(id, 0) {
			c.rec.finish(sl.meas.Load(), sl.start.Load(), c.r.now(), outIO, 0, 0)
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
			if id == 0 || now-sl.sent.Load() < timeout || !sl.id.CompareAndSwap(id, 0) {
				continue
			}
			if sl.meas.Load() {
				c.oobTimeout.Add(1)
			}
			c.rec.live.done.Add(1)
			c.rec.live.errs.Add(1)
			buf = append(buf[:0], cancelledPrefix...)
			buf = strconv.AppendInt(buf, id, 10)
			buf = append(buf, cancelledSuffix...)
			_ = c.fw.WriteFrame(buf)
			c.free <- int32(k)
		}
	}
}

// sendLoop sends requests with up to win in flight until the scheduler
// ends the run. In a closed loop every slot that is free when the sender
// looks is filled, and the requests leave in one write (a pipelining
// client); in an open loop each leaves when it is due.
func (c *streamConn) sendLoop() {
	r := c.r
	s := r.sched
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	queued := 0 // closed loop: requests queued since the last flush
	for {
		var k int32
		var start int64
		var meas, ok bool
		if s.rate <= 0 {
			// Closed loop: a request starts when a slot is free.
			select {
			case k = <-c.free:
			default:
				if queued > 0 {
					queued = 0
					if c.fw.Flush() != nil {
						return
					}
				}
				select {
				case k = <-c.free:
				case <-c.dead:
					return
				case <-s.done:
					return
				}
			}
			if start, meas, ok = s.next(timer); !ok || c.ended.Load() {
				// The run is over, or the server closed the connection (a
				// request sent now would only time out).
				c.free <- k
				_ = c.fw.Flush()
				return
			}
		} else {
			// Open loop: the request is due at start, whether a slot is
			// free or not; waiting for one is part of its latency.
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
		}
		if !c.send(&c.snd, k, start, meas, s.rate <= 0) {
			return
		}
		if s.rate <= 0 {
			queued++
		}
	}
}

// send puts a request in slot k on the wire: queued for the next Flush when
// queue is set, written at once otherwise. It reports false when the
// connection can no longer send (the slot is then given back).
func (c *streamConn) send(ss *sendState, k int32, start int64, meas, queue bool) bool {
	r := c.r
	s := r.sched
	ti := r.pickIndex(&ss.pos)
	sl := &c.slots[k]
	sl.gen++
	id := sl.gen*c.win + int64(k)
	now := s.now()
	if s.rate <= 0 {
		start = now
	}
	sl.start.Store(start)
	sl.sent.Store(now)
	sl.meas.Store(meas)
	sl.progress.Store(0)
	sl.tpl.Store(int32(ti))
	sl.id.Store(id)
	if c.pub != nil {
		if r.tpls[ti].seqGap > 0 {
			// Unique URIs: the publish's index in the log names its URI.
			ss.seqBuf = strconv.AppendInt(ss.seqBuf[:0], c.pub.n.Load(), 10)
		}
		c.pub.add(now, meas)
	}
	ss.idBuf = strconv.AppendInt(ss.idBuf[:0], id, 10)
	ss.wbuf = r.tpls[ti].appendBodySeq(ss.wbuf[:0], ss.idBuf, ss.seqBuf) // seqBuf: unused without a sequence gap
	var err error
	if queue {
		err = c.fw.QueueFrame(ss.wbuf)
	} else {
		err = c.fw.WriteFrame(ss.wbuf)
	}
	if err != nil {
		if sl.id.CompareAndSwap(id, 0) {
			if meas {
				c.oobIO.Add(1)
			}
			c.rec.live.done.Add(1)
			c.rec.live.errs.Add(1)
			c.free <- k
		}
		return false
	}
	return true
}

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
func (c *streamConn) writeFrame(b []byte) error { return c.fw.WriteFrame(b) }

// shutdown ends the connection: for stdio, close the child's stdin and
// wait for it to exit, then SIGTERM, then SIGKILL (STD-11); for sockets,
// half-close and wait for the server to close its side.
func (c *streamConn) shutdown(grace time.Duration) error {
	close(c.stopSweep)
	<-c.sweepDone
	_ = c.fw.Close()
	var err error
	if c.cmd != nil {
		c.stdin.Close()
		if !waitClosed(c.dead, grace) {
			// Where SIGTERM cannot be sent (Windows), go on to Kill at once.
			if c.cmd.Process.Signal(syscall.SIGTERM) != nil || !waitClosed(c.dead, 2*time.Second) {
				_ = c.cmd.Process.Kill()
				if !waitClosed(c.dead, 2*time.Second) {
					c.stdout.Close() // a grandchild holds the pipe
					<-c.dead
				}
			}
		}
		err = c.cmd.Wait()
		_ = c.stderr.Close() // the copy has ended: write an unfinished last line
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			err = fmt.Errorf("server process %d: %v", c.idx, ee)
		} else if err != nil {
			err = fmt.Errorf("server process %d: %w", c.idx, err)
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
	if c.fr != nil {
		c.fr.Release()
	}
	return err
}

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
