package load

import (
	"io"
	"strconv"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// The HTTP relay: a closed loop (no -rate, not the listen workload) over
// HTTP on a system with a poller (Linux), with at least two connections. Each worker's connection is a
// socket dialled outside Go's network poller and read by one of the run's
// pollers (poll_linux.go), which parses the response as it arrives (the
// httpwire.Reader in push mode) and, once it is complete, records it and writes
// the next request on the same connection itself. A request then costs
// one write, one read and a share of an epoll_wait, with no goroutine
// parked and woken and no read that returns EAGAIN, as in the socket relay.
//
// Ownership: at any time exactly one goroutine drives a worker, either its
// sender goroutine (relayLoop: the first request, and whenever a connection
// has to be opened again or a request resent) or the poller that reads its
// connection (from the moment the sender registers it until the poller
// removes it and hands the worker back on kick). The timeout sweeper
// (sweepHTTP) touches only atomics and, under fdMu, shuts the socket down.
//
// A request in flight is claimed back with a compare-and-swap on inflight,
// so exactly one of the poller (an answer or a failure), the sender (a
// failed dial or write) or the sweeper (a timeout) completes it. A timed-out
// request's connection is shut down (HTTP/1.1 has no other way to abandon a
// request, and the blocking client closes it too); the poller then sees the
// end of the stream and the sender carries on on a fresh connection.

// httpKeyBase separates HTTP workers' poller keys from stream connections'.
const httpKeyBase = 1 << 30

// httpRelayMinConns is the fewest connections run as a relay. With a
// single connection there is no epoll_wait to share, and the goroutine
// over a net.Conn costs less per request (one system call fewer, and Go's
// scheduler often catches the answer while it looks for work before it
// sleeps): measured on the reference box, 1 connection: 26.8 µs per
// request against 30.4 for the relay; 2 connections: 29.9 against 25.8.
// A variable so that tests can take the relay through one connection.
var httpRelayMinConns = 2

// httpRelay reports whether the run's HTTP workers run as relays.
func (r *run) httpRelay() bool {
	return canPoll && r.t.kind == "http" && !r.t.tls && r.cfg.Rate <= 0 && r.cfg.Workload != WorkloadListen &&
		r.cfg.Conns >= httpRelayMinConns
}

// setupRelay dials worker w's first connection (before the clock starts).
func (w *httpWorker) setupRelay(i int) error {
	r := w.r
	p, err := r.pollerFor(i)
	if err != nil {
		return err
	}
	w.relay, w.p, w.key = true, p, int32(httpKeyBase+i)
	w.kick = make(chan bool, 1)
	w.conn.br.Reset(nil, framing.AcquireBuf(w.conn.bufSize))
	w.conn.br.Push = true
	fd, err := dialFD("tcp", r.t.addr, r.cfg.Timeout)
	if err != nil {
		return err
	}
	w.setFD(fd)
	return nil
}

// setFD makes fd the worker's connection (owner only).
func (w *httpWorker) setFD(fd *fdConn) {
	w.fdMu.Lock()
	w.fd = fd
	w.fdMu.Unlock()
	c := &w.conn
	c.used, c.inBody = 0, false
	b := &c.br
	b.R, b.W, b.Err, b.Got = 0, 0, nil, 0
}

// closeFD closes the worker's connection (owner only): it leaves its
// poller first if it is registered.
func (w *httpWorker) closeFD() {
	if w.fd == nil {
		return
	}
	if w.polled {
		w.p.remove(w.key, w.fd)
		w.polled = false
	}
	w.fdMu.Lock()
	fd := w.fd
	w.fd = nil
	w.fdMu.Unlock()
	_ = fd.close()
}

// closeRelay releases the worker at teardown, after the pollers stopped.
func (w *httpWorker) closeRelay() {
	if !w.relay {
		return
	}
	w.polled = false // the pollers are gone
	w.closeFD()
	framing.ReleaseBuf(w.conn.br.Buf)
	w.conn.br.Buf = nil
}

// relayLoop is a relay worker's sender goroutine: it sends the first
// request, and again whenever the poller hands the worker back, until the
// run is over for this worker.
func (w *httpWorker) relayLoop() {
	for w.relayStart() {
		if over := <-w.kick; over {
			return
		}
	}
}

// relayStart puts the next request (or the one to resend) on the wire,
// opening a connection when there is none, and hands the connection to the
// poller. It reports false when the run is over for this worker.
func (w *httpWorker) relayStart() bool {
	r := w.r
	s := r.sched
	for {
		if w.retry && w.inflight.Load() == w.wantID {
			w.attempt = 1 // the same request, once more, on a fresh connection
		} else {
			_, measured, ok := s.next(w.timer)
			if !ok {
				return false
			}
			w.prepare(measured)
		}
		w.retry = false
		if w.fd == nil {
			fd, err := dialFD("tcp", r.t.addr, r.cfg.Timeout)
			if err != nil {
				if w.inflight.CompareAndSwap(w.wantID, 0) {
					out := outTimeout
					if !isTimeout(err) {
						out = outConnect
						time.Sleep(10 * time.Millisecond) // no busy loop on a refused port
					}
					w.rec.finish(w.measured, w.start, s.now(), out, 0, 0)
				}
				continue
			}
			w.setFD(fd)
		}
		if w.inflight.Load() != w.wantID {
			continue // timed out while the connection was being opened
		}
		if !w.send() {
			continue
		}
		w.polled = true
		if err := w.p.add(w.key, w.fd, w); err != nil {
			w.polled = false
			w.closeFD()
			if w.inflight.CompareAndSwap(w.wantID, 0) {
				w.rec.finish(w.measured, w.start, s.now(), outIO, 0, 0)
			}
			r.warnf("connection %d: %v", w.key-httpKeyBase, err)
			return false
		}
		return true
	}
}

// prepare builds the next request and marks it in flight.
func (w *httpWorker) prepare(measured bool) {
	w.tpl = w.r.pick(&w.pos)
	w.nextID++
	w.wantID = w.nextID
	w.idBuf = strconv.AppendInt(w.idBuf[:0], w.wantID, 10)
	w.wbuf = w.tpl.appendHTTP(w.wbuf[:0], w.idBuf)
	now := w.r.sched.now() // closed loop: a request starts when it is sent
	w.start, w.measured, w.attempt = now, measured, 0
	w.measAt.Store(measured)
	w.sentAt.Store(now)
	w.inflight.Store(w.wantID)
}

// send writes the request in wbuf. On failure the connection is closed and
// the request is set to be resent or completed as failed (see fail); send
// then reports false.
func (w *httpWorker) send() bool {
	w.conn.begin()
	w.got, w.out, w.code, w.progress = false, outOK, 0, 0
	n, err := w.fd.Write(w.wbuf)
	w.r.bytesOut.Add(int64(n))
	if err == nil {
		return true
	}
	w.closeFD()
	w.fail(err, 0)
	return false
}

// fail ends the request in flight after err, its connection closed. As in
// do: a kept-alive connection the server closed before any of the response
// arrived gets the request once more on a fresh connection; anything else
// is an io error (timeouts are the sweeper's).
func (w *httpWorker) fail(err error, status int) {
	if w.attempt == 0 && status == 0 && w.conn.retryable(err) && w.inflight.Load() == w.wantID {
		w.retry = true
		return
	}
	if w.inflight.CompareAndSwap(w.wantID, 0) {
		w.rec.finish(w.measured, w.start, w.r.now(), outIO, 0, 0)
	}
}

// handBack returns the worker to its sender goroutine (poller side, after
// closeFD).
func (w *httpWorker) handBack() { w.kick <- false }

// step parses what has arrived (poller side) and, for every response that
// is complete, records it and sends the next request on the same
// connection, or hands the worker back to its sender goroutine.
func (w *httpWorker) step() {
	s := w.r.sched
	for {
		done, status, err := w.conn.readResponse(w)
		if !done {
			return
		}
		if w.finished {
			// Nothing is in flight: the server closed the idle connection
			// (or sent bytes nobody asked for).
			w.closeFD()
			return
		}
		var out int
		var code int64
		switch {
		case w.got:
			out, code = w.out, w.code
			if (out == outOK || out == outToolError || out == outBad) && (status < 200 || status > 299) {
				out, code = outHTTP, int64(status)
			}
		case err != nil:
			w.closeFD()
			w.fail(err, status)
			w.handBack()
			return
		case status < 200 || status > 299:
			out, code = outHTTP, int64(status)
		default:
			out = outBad
		}
		end := w.doneAt
		if !w.got {
			end = s.now()
		}
		claimed := w.inflight.CompareAndSwap(w.wantID, 0)
		if claimed {
			w.rec.finish(w.measured, w.start, end, out, code, w.progress)
		}
		if !claimed || err != nil || !w.conn.keepAlive() {
			// A request the sweeper timed out, or a connection that cannot
			// carry another request: the sender opens a new one.
			w.closeFD()
			w.handBack()
			return
		}
		_, measured, ok := s.next(nil)
		if !ok {
			w.finished = true
			w.kick <- true
			return
		}
		w.prepare(measured)
		if !w.send() {
			w.handBack()
			return
		}
		if b := &w.conn.br; b.R == b.W && b.Err == nil {
			return // wait for the answer
		}
	}
}

// startHTTPSweep starts the timeout sweeper of a relay run.
func (r *run) startHTTPSweep() {
	r.sweepStop, r.sweepDone = make(chan struct{}), make(chan struct{})
	go r.sweepHTTP(r.sweepStop, r.sweepDone)
}

// stopHTTPSweep ends it (teardown).
func (r *run) stopHTTPSweep() {
	if r.sweepStop != nil {
		close(r.sweepStop)
		<-r.sweepDone
		r.sweepStop = nil
	}
}

// sweepHTTP times out relay requests that have waited longer than the
// timeout: it counts them and shuts their connection down, which its
// poller sees as the end of the stream (see the ownership notes above).
func (r *run) sweepHTTP(stop, done chan struct{}) {
	defer close(done)
	timeout := int64(r.cfg.Timeout)
	tick := min(max(time.Duration(timeout)/10, time.Millisecond), 100*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-stop:
			return
		}
		now := r.now()
		for _, w := range r.workers {
			id := w.inflight.Load()
			if id == 0 || now-w.sentAt.Load() < timeout {
				continue
			}
			w.fdMu.Lock()
			if w.inflight.CompareAndSwap(id, 0) {
				meas := w.measAt.Load()
				if meas {
					w.oobTimeout.Add(1)
				}
				w.rec.live.fail(meas) // a warm-up timeout counts as warm-up on the live line
				if w.fd != nil {
					_ = w.fd.closeBoth()
				}
			}
			w.fdMu.Unlock()
		}
	}
}

// mergeOOB adds the timeouts counted by the sweeper (collect).
func (w *httpWorker) mergeOOB() {
	if n := w.oobTimeout.Load(); n > 0 {
		w.rec.errs.named[errTimeout] += n
		w.rec.requests += n
	}
}

// relayEnded is the poller's view of a connection that ended or failed
// with err while it owned the worker.
func (w *httpWorker) relayEnded(err error) {
	if err == nil {
		err = io.EOF
	}
	w.conn.br.Err = err
	w.step()
}
