package load

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/internal/httpwire"
)

// msgSink receives each JSON-RPC message of a response body: the whole
// body of an application/json response, the data of each event of a
// text/event-stream one.
type msgSink interface{ message(msg []byte) }

// httpConn is one HTTP/1.1 keep-alive connection of a minimal client:
// write a request, read the status line, headers and a Content-Length,
// chunked or close-delimited body; text/event-stream bodies are split into
// events as they arrive.
type httpConn struct {
	addr    string
	tls     *tls.Config // https: crypto/tls over the socket (see tls.go)
	bufSize int
	in, out *atomic.Int64 // byte counters

	nc      net.Conn
	br      httpwire.Reader
	body    httpwire.Body
	sse     httpwire.SSEParser
	scratch []byte
	used    int // requests carried by nc

	h      httpwire.Head // of the response being read
	inBody bool          // its head has been read
}

func (c *httpConn) dial(timeout time.Duration) error {
	nc, err := dialHTTP(c.addr, c.tls, timeout)
	if err != nil {
		return err
	}
	c.attach(nc)
	return nil
}

func (c *httpConn) attach(nc net.Conn) {
	c.nc, c.used = nc, 0
	c.br.Reset(countReader{nc, c.in}, framing.AcquireBuf(c.bufSize))
}

func (c *httpConn) close() {
	if c.nc == nil {
		return
	}
	c.nc.Close()
	c.nc = nil
	framing.ReleaseBuf(c.br.Buf)
	c.br.Buf = nil
}

// roundTrip writes req and reads its response, handing every JSON-RPC
// message in the body to sink as it arrives. The connection is closed when
// it cannot carry another request (Connection: close, a body delimited by
// EOF, or any error).
func (c *httpConn) roundTrip(req []byte, sink msgSink) (status int, err error) {
	c.begin()
	n, err := c.nc.Write(req)
	c.out.Add(int64(n))
	if err != nil {
		c.close()
		return 0, err
	}
	_, status, err = c.readResponse(sink) // pull mode: always done
	if err != nil || !c.keepAlive() {
		c.close()
	}
	return status, err
}

// begin starts a request on the connection.
func (c *httpConn) begin() {
	c.used++
	c.br.Got = 0
	c.inBody = false
}

// keepAlive reports whether the connection can carry another request once
// the response just read is complete.
func (c *httpConn) keepAlive() bool { return !c.h.Close && c.body.Reusable() }

// readResponse reads the response to the request in flight, handing every
// JSON-RPC message of its body to sink as it arrives. In pull mode it reads
// until the response is complete or fails. In push mode it parses what the
// buffer holds and reports done false when it needs more bytes; called
// again once they have arrived, it resumes (the head is parsed again from
// its start, the body where it stopped). status is the response's status
// (0 when the head itself failed); err != nil means the response failed
// (done is then true).
func (c *httpConn) readResponse(sink msgSink) (done bool, status int, err error) {
	b := &c.br
	if !c.inBody {
		r0 := b.R
		if err := b.ReadHead(&c.h); err != nil {
			if err == httpwire.ErrNeedMore {
				b.R = r0
				return false, 0, nil
			}
			return true, 0, err
		}
		c.body.Reset(b, &c.h)
		c.inBody = true
		if c.h.SSE {
			c.sse.Reset()
		}
	}
	if c.h.SSE {
		for {
			seg, err := c.body.Next()
			if err == io.EOF {
				break
			}
			if err == httpwire.ErrNeedMore {
				return false, c.h.Status, nil
			}
			if err != nil {
				return true, c.h.Status, err
			}
			c.sse.Push(seg)
			for {
				data, ok := c.sse.Next()
				if !ok {
					break
				}
				if len(data) > 0 {
					sink.message(data)
				}
			}
		}
	} else {
		body, err := c.body.ReadAll(&c.scratch)
		if err == httpwire.ErrNeedMore {
			return false, c.h.Status, nil
		}
		if err != nil {
			return true, c.h.Status, err
		}
		if len(body) > 0 {
			sink.message(body)
		}
	}
	c.inBody = false
	return true, c.h.Status, nil
}

// retryable reports whether err on a reused keep-alive connection means
// the server closed it before reading the request (nothing of a response
// arrived): the request is sent again once on a fresh connection, as
// net/http does (but for a unique-URI touch: see do).
func (c *httpConn) retryable(err error) bool {
	return c.used > 1 && c.br.Got == 0 &&
		(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
			errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// classify sorts a final JSON-RPC response: an error (by code), a tools/call
// result with isError true, or success.
func classify(msg []byte, env *codec.Envelope, isCall bool) (int, int64) {
	if env.HasError {
		raw, ok := codec.LookupPath(msg, "error", "code")
		if !ok {
			return outBad, 0
		}
		code, ok := parseInt(raw)
		if !ok {
			return outBad, 0
		}
		return outRPC, code
	}
	if isCall {
		if raw, ok := codec.LookupPath(msg, "result", "isError"); ok && string(raw) == "true" {
			return outToolError, 0
		}
	}
	return outOK, 0
}

// httpWorker drives one connection: one request in flight at a time.
type httpWorker struct {
	r      *run
	conn   httpConn
	rec    *recorder
	timer  *time.Timer
	pub    *pubLog // listen: the publisher's send log
	seqBuf []byte  // listen, unique URIs: the publish's sequence number

	pos    int
	nextID int64
	idBuf  []byte
	wbuf   []byte
	env    codec.Envelope

	// The request in flight.
	tpl      *reqTemplate
	wantID   int64
	got      bool
	out      int
	code     int64
	progress int
	doneAt   int64

	// relay: a closed loop whose connection a poller reads (httprelay.go).
	relay      bool
	p          *poller
	key        int32
	fd         *fdConn    // the connection; nil between connections
	fdMu       sync.Mutex // fd: set and cleared by the owner, shut down by the sweeper
	polled     bool       // fd is registered with p
	kick       chan bool  // the poller hands the worker back; true: the run is over for it
	start      int64      // send time of the request in flight
	measured   bool
	attempt    int
	retry      bool         // resend the request in flight on a fresh connection
	finished   bool         // the run is over for this worker (poller side)
	inflight   atomic.Int64 // id of the request in flight, 0 when none; claimed back by CAS
	sentAt     atomic.Int64
	measAt     atomic.Bool
	oobTimeout atomic.Int64 // measured timeouts (sweeper)
}

func (r *run) newHTTPWorker(i int) *httpWorker {
	w := &httpWorker{r: r, rec: newRecorder(), timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	w.conn = httpConn{addr: r.t.addr, tls: r.t.conf, bufSize: 16 << 10, in: &r.bytesIn, out: &r.bytesOut}
	w.pos = i * 7 // spread the mix cycle across workers
	w.idBuf = make([]byte, 0, 24)
	w.wbuf = make([]byte, 0, 4096)
	return w
}

func (w *httpWorker) message(msg []byte) {
	if w.got {
		return
	}
	if codec.Peek(msg, &w.env) != nil {
		return
	}
	switch w.env.Kind {
	case codec.KindResponse:
		w.got = true
		w.doneAt = w.r.now()
		id, ok := parseInt(w.env.ID)
		if w.env.IDKind != codec.IDNumber || !ok || id != w.wantID {
			w.out = outBad
			return
		}
		w.out, w.code = classify(msg, &w.env, w.tpl.isCall)
	case codec.KindNotification:
		if w.env.Method.EqualString("notifications/progress") {
			w.progress++
		}
	}
}

// loop sends requests until the scheduler ends the run.
func (w *httpWorker) loop() {
	s := w.r.sched
	for {
		start, measured, ok := s.next(w.timer)
		if !ok {
			return
		}
		w.tpl = w.r.pick(&w.pos)
		w.nextID++
		w.wantID = w.nextID
		w.idBuf = strconv.AppendInt(w.idBuf[:0], w.wantID, 10)
		if w.pub != nil && w.tpl.seqGap > 0 {
			// Unique URIs: the publish's index in the log names its URI.
			w.seqBuf = strconv.AppendInt(w.seqBuf[:0], w.pub.n.Load(), 10)
			w.wbuf = w.tpl.appendHTTPSeq(w.wbuf[:0], w.idBuf, w.seqBuf)
		} else {
			w.wbuf = w.tpl.appendHTTP(w.wbuf[:0], w.idBuf)
		}
		sent := s.now()
		if s.rate <= 0 {
			start = sent
		}
		pk := int64(-1)
		if w.pub != nil {
			pk = w.pub.n.Load()
			w.pub.add(sent, measured)
		}
		out, code := w.do()
		if pk >= 0 && out != outOK {
			// An error reply, a timeout or a broken connection: the
			// server may not have published this touch.
			w.pub.fail(pk)
		}
		done := w.doneAt
		if !w.got {
			done = s.now()
		}
		w.rec.finish(measured, start, done, out, code, w.progress)
	}
}

// do carries the request in wbuf: connects when needed, sends it, reads
// the response, and classifies the outcome.
func (w *httpWorker) do() (int, int64) {
	timeout := w.r.cfg.Timeout
	for attempt := 0; ; attempt++ {
		w.got, w.out, w.code, w.progress = false, outOK, 0, 0
		if w.conn.nc == nil {
			if err := w.conn.dial(timeout); err != nil {
				if isTimeout(err) {
					return outTimeout, 0
				}
				time.Sleep(10 * time.Millisecond) // no busy loop on a refused port
				return outConnect, 0
			}
		}
		w.conn.nc.SetDeadline(time.Now().Add(timeout))
		status, err := w.conn.roundTrip(w.wbuf, w)
		switch {
		case w.got:
			if err != nil {
				w.conn.close() // the answer came; the rest of the stream did not
			}
			if (w.out == outOK || w.out == outToolError || w.out == outBad) && (status < 200 || status > 299) {
				return outHTTP, int64(status)
			}
			return w.out, w.code
		case err != nil:
			w.conn.close()
			// A unique-URI touch is not sent again: the server may have
			// published it before the connection broke, and a second copy
			// would publish its URI twice. It counts as failed instead.
			if attempt == 0 && status == 0 && w.conn.retryable(err) && (w.pub == nil || w.r.seqPrefix == nil) {
				continue
			}
			if isTimeout(err) {
				return outTimeout, 0
			}
			return outIO, 0
		case status < 200 || status > 299:
			return outHTTP, int64(status)
		default:
			return outBad, 0
		}
	}
}

// fetcher collects the final response of a one-off setup request.
type fetcher struct {
	env  codec.Envelope
	resp []byte
}

func (f *fetcher) message(msg []byte) {
	if codec.Peek(msg, &f.env) == nil && f.env.Kind == codec.KindResponse && f.resp == nil {
		f.resp = append([]byte(nil), msg...)
	}
}

// httpListener is one subscriptions/listen stream over its own connection.
type httpListener struct {
	r    *run
	s    *listenStream
	conn httpConn
	req  []byte
	env  codec.Envelope

	mu       sync.Mutex
	nc       net.Conn
	stopping bool
}

func (l *httpListener) message(msg []byte) {
	now := l.r.now()
	if codec.Peek(msg, &l.env) != nil {
		return
	}
	switch l.env.Kind {
	case codec.KindNotification:
		l.r.streamNote(l.s, &l.env, msg, now, nil)
	case codec.KindResponse:
		l.r.streamEnd(l.s, &l.env, msg)
	}
}

// run opens the stream and reads it until stop closes the connection or
// the server ends it.
func (l *httpListener) run(dialSem chan struct{}) {
	dialSem <- struct{}{}
	nc, err := dialHTTP(l.r.t.addr, l.r.t.conf, l.r.cfg.Timeout)
	<-dialSem
	if err != nil {
		l.r.listenFailed(l.s, errConnect)
		return
	}
	l.mu.Lock()
	if l.stopping {
		l.mu.Unlock()
		nc.Close()
		return
	}
	l.nc = nc
	l.mu.Unlock()
	l.conn.attach(nc)
	status, err := l.conn.roundTrip(l.req, l)
	l.mu.Lock()
	stopping := l.stopping
	l.mu.Unlock()
	l.conn.close()
	switch {
	case stopping:
	case l.s.state.Load() != streamOpen: // the server answered the listen request
	case status != 0 && (status < 200 || status > 299):
		l.r.listenFailed(l.s, "http_"+strconv.Itoa(status))
	case !l.s.acked.Load():
		l.r.listenFailed(l.s, errListenFailed)
	default:
		_ = err
		l.r.listenFailed(l.s, errListenLost)
	}
}

// stop ends the stream from the client side: on HTTP, by closing the
// connection (SUB-09).
func (l *httpListener) stop() {
	l.mu.Lock()
	l.stopping = true
	if l.nc != nil {
		l.nc.Close()
	}
	l.mu.Unlock()
}
