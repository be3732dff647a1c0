package streamhttp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

type mode uint8

const (
	modeWaiting mode = iota // nothing produced yet
	modeJSON                // the response came first: one JSON body
	modeSSE                 // a notification came first: text/event-stream
)

var (
	errClientGone   = engine.Disconnected(errors.New("streamhttp: client closed the connection"))
	errSlowConsumer = errors.New("streamhttp: client is not reading the stream")
	// errWriteIdle: a stream's write made no progress for WriteIdleTimeout
	// (C5): the client is there but not reading, which is not a disconnect.
	errWriteIdle = errors.New("streamhttp: the stream's writes made no progress for WriteIdleTimeout")
)

// exchange is one POST in flight: the engine's Replier for its Call and the
// SSE pump's queue. It lives until both the engine (Done) and the HTTP side
// (release) are finished with it, then returns to the pool.
type exchange struct {
	s *Server

	mu    sync.Mutex
	mode  mode
	queue []byte // SSE bytes not yet written
	spare []byte
	reply []byte // the final response (JSON mode), unless inPlace
	// inPlace: the final response is in fw's response body already
	// (Reply, on a quiet exchange), not in reply.
	inPlace bool
	status  int
	replied bool
	ended   bool // engine Done
	gone    error
	signal  chan struct{} // wakes the waiter / pump (cap 1)

	// call refers to the request; a CallRef stays safe after the Call is
	// recycled (cancelling it then does nothing).
	call engine.RequestRef

	refs atomic.Int32
	// async: the request went to the engine with Start, and Done
	// releases the reference taken for it. Run and Fail call Done before
	// they return, while the HTTP side still holds its own: no reference
	// is taken for those. Written before Start, read by Done.
	async bool
	// quiet: Reply and Done come on the goroutine that holds the HTTP
	// side (an inline Run, a Fail) while nothing else can write the
	// exchange (reqInfo.alone, no watcher armed): they take no lock.
	// Written by that goroutine only.
	quiet bool
	// pooled: x waits in the pool. With the count left at 1 there, a
	// stray release would recycle x a second time and two requests could
	// share it; unref refuses instead (a bug in this package, never a
	// client's doing).
	pooled bool
	// waiting is set, before the state is looked at, by a goroutine that
	// may block on signal; wakers look at it after changing the state, so
	// no wake is lost.
	waiting atomic.Bool
	zbuf    []byte // compressed reply

	// per-request working space, reused with the exchange; a listen
	// stream gives it back once the stream has taken its connection
	// (releaseWork), so an idle stream does not hold it.
	*work
	fw     fastWriter
	onGone func() // cancels the call: the disconnect watcher's callback

	listen bool                     // a subscriptions/listen stream
	conn   net.Conn                 // the streaming connection, closed on a slow consumer
	rc     *http.ResponseController // net/http: its write deadline cuts a slow consumer off
	keys   []uint64                 // keys of the collapsible events in queue

	watch watcher

	// A plain listen stream on a hijacked connection: events are written
	// from Notify when nothing is queued and the pump is not writing
	// (inline_unix.go). All guarded by mu.
	inline   inlineWriter
	inlineOn bool          // inline.rc is set and the stream runs
	pumpBusy bool          // the pump is writing: Notify queues
	inlineAt time.Duration // monoNow of the last inline write (0: none)

	// Such a stream holds no goroutine while it has nothing to write
	// (rawPump): its pump exits and marks it parked, and the next wake
	// (an event queued behind a full socket, the reply, Done, a cancel,
	// the keep-alive timer) starts one again (kick). pst is the pump's
	// bookkeeping across its runs (its writer is x itself, rawOut); ka,
	// the keep-alive timer, holds a reference to x while armed (kaArmed). parked is
	// written under mu; wake reads it without.
	parked  atomic.Bool
	rawLive bool // the raw stream has not ended (rawEnd); guarded by mu
	kaArmed bool // guarded by mu
	kaDue   bool // the keep-alive timer fired since the pump last looked; guarded by mu
	ka      *time.Timer
	pst     pumpState

	// The handler's view of the request's headers (headers.go) and
	// connection.
	hraw []byte      // fasthttp: the raw header block (aliased, or hbuf)
	hbuf []byte      // hraw's own copy when the handler may outlive the request's goroutine
	nh   http.Header // net/http: the request's headers
	// net/http only (fasthttp's serve reads them from the limitConn):
	// the connection's ConnInfo, and the client's IP, an anonymous
	// caller's key for the engine's per-caller limits.
	info *engine.ConnInfo
	peer string

	retry int // a 429's Retry-After, in seconds (engine.Request.RetryAfter); guarded by mu
}

// work is the part of an exchange used only while the request is read,
// checked and dispatched: about 2 KiB that an open listen stream has no
// use for.
type work struct {
	scratch []byte // header decoding space
	accept  []byte // several Accept lines joined
	hdr     mirrored
	vals    [maxFlatBindings][]byte
	// The peek's memo of the last params._meta read with this work
	// (codec.PeekMemo): a client repeats its protocolVersion, clientInfo
	// and clientCapabilities in every request, and the memo takes a repeat
	// with one memory compare. What it holds is compared byte for byte
	// before it is used, so one left by another client's request is as
	// good as none.
	memo codec.PeekMemo
}

var workPool = sync.Pool{New: func() any { return &work{scratch: make([]byte, 0, 256)} }}

func (s *Server) acquireExchange() *exchange {
	x, _ := s.xpool.Get().(*exchange)
	if x == nil {
		x = &exchange{s: s, signal: make(chan struct{}, 1)}
		x.onGone = func() { x.cancel(errClientGone) }
	}
	x.pooled = false
	if x.work == nil {
		x.work = workPool.Get().(*work)
	}
	// The HTTP side's reference. An exchange whose last holder found
	// itself alone (unref) comes back from the pool at 1 already: no
	// atomic write then.
	if x.refs.Load() != 1 {
		x.refs.Store(1)
	}
	return x
}

// releaseWork gives the request's working space back: the request has
// been dispatched and the exchange lives on as a listen stream.
func (x *exchange) releaseWork() {
	w := x.work
	x.work = nil
	w.reset()
	workPool.Put(w)
}

func (w *work) reset() {
	w.hdr.reset() // vals: checkParams clears what it used
	w.accept = w.accept[:0]
	if cap(w.scratch) > 64<<10 {
		w.scratch = make([]byte, 0, 256)
	}
}

// bind makes x the Replier of c. alone: no other goroutine can reach x
// yet (reqInfo.alone), so the call reference is written without the lock
// that cancel reads it under, and x is quiet until dispatch arms a
// watcher or starts the request (handOff).
func (x *exchange) bind(c *engine.Request, alone bool) {
	ref := c.Ref()
	x.quiet = alone
	if alone {
		x.call = ref
		return
	}
	x.mu.Lock()
	x.call = ref
	x.mu.Unlock()
}

// lockUnlessQuiet takes x.mu unless x is quiet (nothing but the caller's
// goroutine can write x then) and reports whether it did.
func (x *exchange) lockUnlessQuiet() bool {
	if x.quiet {
		return false
	}
	x.mu.Lock()
	return true
}

// handOff readies x for a request the engine may answer from another
// goroutine (Start): Done then releases a reference of its own.
func (x *exchange) handOff() {
	x.quiet, x.async = false, true
	x.refs.Add(1)
}

// sole reports whether the caller, holding a reference, holds the only
// one. Nobody adds a reference without holding one, so the answer cannot
// change while the caller keeps its own; and the load orders every write
// other holders made before they let go of theirs before what the caller
// does next.
func (x *exchange) sole() bool { return x.refs.Load() == 1 }

func (x *exchange) unref() {
	if x.pooled {
		panic("streamhttp: an exchange released while in the pool")
	}
	// The last holder finds itself alone and takes no atomic write: the
	// exchange goes back to the pool with the count at 1, as
	// acquireExchange leaves it.
	if !x.sole() && x.refs.Add(-1) != 0 {
		return
	}
	x.mode, x.status, x.replied, x.ended, x.gone, x.inPlace = modeWaiting, 0, false, false, nil, false
	// An exchange still quiet was bound alone and never handed on: none
	// of what resetLoud clears was written (see there). Only one that was
	// not (a hand-off, a stream, net/http, a refusal before bind) pays
	// for the stores.
	if !x.quiet {
		x.resetLoud()
	}
	x.quiet = false
	x.keys, x.call = x.keys[:0], engine.RequestRef{}
	if n := len(x.queue); n > 0 { // a stream that ended with events unsent
		x.s.gauges.queued.Add(-int64(n))
	}
	x.queue, x.spare, x.reply = x.queue[:0], x.spare[:0], x.reply[:0]
	if cap(x.queue) > 64<<10 {
		x.queue = nil
	}
	if cap(x.spare) > 64<<10 {
		x.spare = nil
	}
	if cap(x.reply) > 64<<10 {
		x.reply = nil
	}
	if cap(x.zbuf) > 64<<10 {
		x.zbuf = nil
	}
	if x.work != nil {
		x.work.reset()
	}
	x.fw = fastWriter{}
	x.hraw, x.retry = nil, 0
	x.pooled = true
	x.s.xpool.Put(x)
}

// resetLoud is unref's part for an exchange that was not quiet to the
// end. What it clears is written only once quiet has been cleared for
// good (handOff, dispatch's watch and stream paths), or on the net/http
// front end, whose exchanges are never quiet: async and listen
// (dispatch's hand-off), conn, rc, the inline writer and the pump's
// state (streams), nh, info and peer (net/http), hbuf (ownHeaders, after
// handOff).
// Kept out of line, so that unref's own code stays short.
//
//go:noinline
func (x *exchange) resetLoud() {
	x.async, x.listen, x.conn, x.rc = false, false, nil, nil
	x.inlineOn, x.pumpBusy, x.inlineAt, x.inline.rc = false, false, 0, nil
	x.kaDue, x.pst = false, pumpState{}
	x.nh, x.info, x.peer = nil, nil, ""
	if cap(x.hbuf) > 64<<10 {
		x.hbuf = nil
	}
	// A wake left unread (by a waiter that had its answer already) is
	// dropped. An exchange still quiet was never waited on (waitFirst and
	// the pump set waiting only after quiet is cleared, and wake sends
	// only to a waiter), so its signal is empty: a request run where it
	// was read pays no look at the channel. Otherwise len first (a call,
	// but cheaper than a receive that finds nothing). Only holders send,
	// and none is left.
	if len(x.signal) != 0 {
		select {
		case <-x.signal:
		default:
		}
	}
}

// wake signals a goroutine waiting on x.signal, if one is (waitFirst, the
// pump): a request that runs where it was read has nobody to wake, and
// pays no channel operation.
func (x *exchange) wake() {
	if !x.waiting.Load() {
		return
	}
	if x.parked.Load() {
		x.kick()
		return
	}
	select {
	case x.signal <- struct{}{}:
	default:
	}
}

// appendEvent frames one JSON-RPC message as a data-only SSE event: no id,
// no retry (SSE-06, SSE-07).
func appendEvent(dst, msg []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, msg...)
	return append(dst, "\n\n"...)
}

// Notify implements engine.Replier: the first notification switches the
// reply to SSE; later ones queue for the pump. The engine holds the
// Call's lock here, so this never calls back into the Call.
func (x *exchange) Notify(c *engine.Request, frame []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.notifyLocked(frame, 0, false)
}

// notifyLocked is Notify with x.mu held. With keyed set, key is recorded
// for collapsing while the event waits in the queue: an event written
// inline has left, so a later one with its key must not collapse into it.
func (x *exchange) notifyLocked(frame []byte, key uint64, keyed bool) error {
	if x.gone != nil {
		return x.gone
	}
	if x.mode == modeWaiting {
		x.mode = modeSSE
	}
	if len(x.queue)+len(frame)+8 > x.maxPending() {
		x.gone = errSlowConsumer
		x.s.stats.SlowConsumers.Add(1)
		x.wake()
		// The pump may be stuck in a write to the peer that stopped
		// reading: close the connection to unblock it, and cancel the call
		// from another goroutine (the Call's lock is held here).
		conn, rc := x.conn, x.rc
		x.refs.Add(1) // held by the goroutine below
		go func() {
			defer x.unref()
			switch {
			case conn != nil:
				_ = conn.Close()
			case rc != nil:
				_ = rc.SetWriteDeadline(time.Now())
			}
			x.cancel(errSlowConsumer)
		}()
		return x.gone
	}
	if x.inlineOn && !x.pumpBusy && len(x.queue) == 0 && x.inlineDue() {
		if x.notifyInline(frame) && keyed {
			x.keys = append(x.keys, key) // part of it waits in the queue
		}
		return nil
	}
	if keyed {
		x.keys = append(x.keys, key)
	}
	n := len(x.queue)
	x.queue = appendEvent(x.queue, frame)
	x.s.gauges.queued.Add(int64(len(x.queue) - n))
	x.wake()
	return nil
}

// inlineGap: an event that comes less than this after the stream's last
// inline write is queued for the pump instead. A burst (many updates
// published back to back) then leaves in a few batched writes, as before
// inline writes, where a write per event cost three times as much
// (TestFanoutSlowConsumer's 25,000 events); a stream paced by its
// publisher, the usual case, still takes every event inline.
const inlineGap = 200 * time.Microsecond

// inlineDue reports whether the stream may take an event inline now.
func (x *exchange) inlineDue() bool {
	return x.inlineAt == 0 || monoNow()-x.inlineAt >= inlineGap
}

// monoEpoch anchors monoNow, a monotonic clock reading that fits in 8 bytes.
var monoEpoch = time.Now()

func monoNow() time.Duration { return time.Since(monoEpoch) }

// eventBufs holds the buffers inline events are framed in.
var eventBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// notifyInline writes frame's event straight to the socket; what the
// socket does not take is queued for the pump, in order, and reported
// (true). Called with x.mu held, nothing queued and the pump not writing.
func (x *exchange) notifyInline(frame []byte) (queued bool) {
	bp := eventBufs.Get().(*[]byte)
	ev := appendEvent((*bp)[:0], frame)
	n := x.inline.try(ev)
	if n > 0 {
		x.inlineAt = monoNow()
	}
	if queued = n < len(ev); queued {
		x.queue = append(x.queue, ev[n:]...)
		x.s.gauges.queued.Add(int64(len(ev) - n))
		x.wake()
	}
	if cap(ev) <= 64<<10 {
		*bp = ev[:0]
		eventBufs.Put(bp)
	}
	return queued
}

func (x *exchange) maxPending() int {
	if x.listen {
		return x.s.cfg.MaxListenPendingBytes
	}
	return x.s.cfg.MaxPendingBytes
}

// NotifyKeyed implements engine.KeyedNotifier: a listen-stream event whose
// key matches one still queued (the same URI updated again, the same list
// changed again) is dropped, so a listener that is behind gets one
// notification per URI, not one per update.
func (x *exchange) NotifyKeyed(c *engine.Request, frame []byte, key uint64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range x.keys {
		if k == key && x.gone == nil {
			x.s.stats.Collapsed.Add(1)
			return nil
		}
	}
	return x.notifyLocked(frame, key, true)
}

// DropsOnCancel implements engine.StreamDropper: a cancelled stream ends
// without a response (the pump stops at Done, the connection or chunked
// body is closed), which a client takes as a drop and answers by listening
// again (SUB-10).
func (x *exchange) DropsOnCancel() {}

// Reply implements engine.Replier.
func (x *exchange) Reply(c *engine.Request, frame []byte, status int) error {
	if !x.quiet {
		return x.replyMu(c, frame, status)
	}
	if x.fw.ctx == nil || x.mode != modeWaiting || x.gone != nil || status == 0 {
		return x.replyLocked(c, frame, status)
	}
	// The JSON reply of a quiet exchange on the fasthttp front end: the
	// frame becomes the response's body, where sendReplyOf finds it
	// (inPlace), instead of going into x.reply and from there into the
	// body. Quiet, the request's goroutine is the caller, so the
	// RequestCtx is still its own; whatever answers the request after
	// this is sendReplyOf (see dispatch), which either sends the body as
	// it is or replaces it (compression). A status of 0 (sendReplyOf
	// answers it 499 without a body; the engine sends none) keeps
	// x.reply.
	//
	// Without a copy when the frame is the engine's own buffer (the
	// usual case): the body's array and the frame's trade places
	// (SwapBody, SwapReply), the engine writing its next response in what
	// was the body's. Otherwise it is copied into the body as before.
	x.mode = modeJSON
	resp := &x.fw.ctx.Response
	if old := resp.SwapBody(frame); !c.SwapReply(frame, old) {
		resp.SwapBody(append(old[:0], frame...)) // frame's array stays the engine's
	}
	x.inPlace = true
	x.status = status
	if status == 429 {
		x.retry = c.RetryAfter()
	}
	x.replied = true
	return nil // a quiet exchange has no waiter to wake
}

// replyMu is Reply for an exchange that is not quiet: under x.mu.
func (x *exchange) replyMu(c *engine.Request, frame []byte, status int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.replyLocked(c, frame, status)
}

// replyLocked is Reply with x.mu held, or x quiet.
func (x *exchange) replyLocked(c *engine.Request, frame []byte, status int) error {
	if x.gone != nil {
		return x.gone
	}
	switch x.mode {
	case modeWaiting:
		x.mode = modeJSON
		x.reply = append(x.reply[:0], frame...)
		x.status = status
		if status == 429 {
			x.retry = c.RetryAfter()
		}
	default:
		// Once the stream has started, the response (result or error) is
		// its last event (ERR-04).
		n := len(x.queue)
		x.queue = appendEvent(x.queue, frame)
		x.s.gauges.queued.Add(int64(len(x.queue) - n))
	}
	x.replied = true
	x.wake()
	return nil
}

// Done implements engine.Replier.
func (x *exchange) Done(c *engine.Request) {
	if x.quiet {
		// Nobody waits on a quiet exchange (waitFirst and the pump wait
		// only once quiet is cleared: wake would find no waiter), and
		// the engine holds no reference of its own (async is set only
		// with quiet cleared, handOff).
		x.ended = true
		return
	}
	x.mu.Lock()
	x.ended = true
	x.mu.Unlock()
	x.wake()
	if x.async {
		x.unref()
	}
}

// cancel cancels the call if it is still running (client gone, slow
// consumer, write failure) and records why.
// A client that left (errClientGone) is counted once per exchange in
// Stats.Disconnects, and the call it cancels in the engine's
// Stats.Cancelled: a disconnect is both.
func (x *exchange) cancel(why error) {
	x.mu.Lock()
	first := x.gone == nil
	if first {
		x.gone = why
	}
	ref := x.call
	x.mu.Unlock()
	if first && why == errClientGone {
		x.s.stats.Disconnects.Add(1)
	}
	ref.Cancel(why) // never under x.mu: cancelling may call Done
	x.wake()
}

// waitFirst blocks until the response or the first notification exists,
// or the client is gone. It returns the mode.
func (x *exchange) waitFirst() (mode, error) {
	x.waiting.Store(true)
	defer x.waiting.Store(false)
	for {
		x.mu.Lock()
		m, gone, ended := x.mode, x.gone, x.ended
		x.mu.Unlock()
		if gone != nil {
			return m, gone
		}
		if m != modeWaiting {
			return m, nil
		}
		if ended {
			return m, errClientGone // ended without a reply: cancelled
		}
		<-x.signal
	}
}

func (x *exchange) setConn(c net.Conn) {
	x.mu.Lock()
	x.conn = c
	x.mu.Unlock()
}

// runStream pumps the stream, then ends the watch and drops the HTTP
// side's reference.
func (x *exchange) runStream(w sseWriter) {
	x.pump(w)
	x.watch.stop()
	x.unref()
}

// runRaw serves a listen stream on a connection taken over from the HTTP
// server (fasthttp hijack): the server's goroutine and buffers are gone.
// On a plain socket (inline writes) the stream then holds no goroutine
// while idle either (rawPump): an idle stream costs the exchange, its
// Call and a timer. The response is close-delimited (no Content-Length,
// no chunking, C17).
func (x *exchange) runRaw(conn net.Conn) {
	x.setConn(conn)
	w := (*rawOut)(x)
	if err := x.write(w, sseHead); err != nil {
		x.cancel(errClientGone)
		_ = conn.Close()
		x.unref()
		return
	}
	rc := rawConnOf(conn)
	if rc == nil {
		// Every event goes through the pump: it stays, parked on the
		// signal, for the stream's life.
		x.pump(w)
		_ = conn.Close()
		x.unref()
		return
	}
	x.mu.Lock()
	x.inline.bind(rc)
	x.inlineOn, x.rawLive = true, true
	x.mu.Unlock()
	x.rawPump()
}

// kick starts the pump of a parked raw stream; whoever clears parked runs
// it, so there is never more than one.
func (x *exchange) kick() {
	if x.parked.CompareAndSwap(true, false) {
		go x.rawPump()
	}
}

// rawPump is the pump of a raw stream with inline writes: it writes what
// is queued, the keep-alive comment when due, and the end, and once there
// is nothing to write it parks the stream and returns instead of waiting.
// Its reference to x is the stream's, taken by streamListen; rawEnd drops
// it.
func (x *exchange) rawPump() {
	w := (*rawOut)(x)
	for {
		switch x.pumpStep(w, &x.pst) {
		case stepAgain:
			continue
		case stepEnd:
			x.rawEnd()
			return
		}
		x.mu.Lock()
		if x.kaDue {
			x.kaDue = false
			inlineAt := x.inlineAt
			x.mu.Unlock()
			next, err := x.keepAliveTurn(w, &x.pst, monoNow(), inlineAt)
			if err != nil {
				x.cancel(writeCause(err))
				x.rawEnd()
				return
			}
			x.mu.Lock()
			x.armKeepAlive(next)
			x.mu.Unlock()
			continue
		}
		if len(x.queue) > 0 || x.gone != nil || x.ended || x.replied {
			x.mu.Unlock() // changed since pumpStep looked
			continue
		}
		if !x.kaArmed {
			x.armKeepAlive(x.s.cfg.KeepAlive)
		}
		// No write buffer is kept while idle (the ack's batch, ~300 bytes,
		// would otherwise stay for the stream's life): events go inline, and
		// a backlog allocates one again. keys is empty with the queue.
		x.queue, x.spare, x.keys = nil, nil, nil
		// Parked: a waker that changes the stream's state under mu after
		// this finds parked set and kicks; one that changed it before was
		// seen above.
		x.parked.Store(true)
		x.waiting.Store(true)
		x.mu.Unlock()
		return
	}
}

// armKeepAlive arms the keep-alive timer to fire after d; the timer holds
// a reference to x until it has run or been stopped. Called with x.mu
// held, the timer not armed.
func (x *exchange) armKeepAlive(d time.Duration) {
	x.refs.Add(1)
	x.kaArmed = true
	if x.ka == nil {
		x.ka = time.AfterFunc(d, x.keepAliveFired)
		return
	}
	x.ka.Reset(d)
}

// keepAliveFired is the keep-alive timer's function: the pump, started if
// the stream is parked, takes its turn (keepAliveTurn).
func (x *exchange) keepAliveFired() {
	x.mu.Lock()
	x.kaArmed = false
	live := x.rawLive
	if live {
		x.kaDue = true
	}
	x.mu.Unlock()
	if live && x.parked.CompareAndSwap(true, false) {
		x.rawPump() // on this goroutine: the timer's own
	}
	x.unref() // the timer's reference
}

// rawEnd ends a raw stream on its pump's goroutine: no more inline
// writes, the keep-alive timer stopped, the connection closed, the
// stream's reference dropped.
func (x *exchange) rawEnd() {
	x.mu.Lock()
	x.inlineOn, x.inline.rc, x.rawLive = false, nil, false
	stopped := x.kaArmed && x.ka.Stop()
	if stopped {
		x.kaArmed = false
	}
	x.mu.Unlock()
	x.waiting.Store(false)
	if stopped {
		x.unref() // the timer's reference; one that fired drops its own
	}
	_ = x.conn.Close()
	x.unref()
}

var sseHead = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n")

// rawOut is the pump's writer on a hijacked connection: x.conn, set
// before the first write and kept until x is recycled, so the pump needs
// no writer of its own across its runs.
type rawOut exchange

func (r *rawOut) Write(p []byte) (int, error)        { return r.conn.Write(p) }
func (r *rawOut) Flush() error                       { return nil }
func (r *rawOut) SetWriteDeadline(t time.Time) error { return r.conn.SetWriteDeadline(t) }

// sseWriter is what the pump writes to: fasthttp's stream writer or an
// http.ResponseWriter, with a way to set the connection's write deadline.
type sseWriter interface {
	io.Writer
	Flush() error
	SetWriteDeadline(time.Time) error
}

// pump writes the SSE stream until the final response has been written,
// the client goes away, or a write makes no progress for WriteIdleTimeout.
// A comment line is written after KeepAlive of silence (SSE-05).
func (x *exchange) pump(w sseWriter) {
	// No timer work per event (the fan-out profile showed a timer reset
	// and a deadline update per write costing more than the hub): the
	// keep-alive timer fires every KeepAlive and writes a comment only if
	// nothing was written since; the write deadline is moved only when it
	// has come within a second of expiring.
	x.waiting.Store(true)
	defer x.waiting.Store(false)
	ka := time.NewTimer(x.s.cfg.KeepAlive)
	defer ka.Stop()
	var st pumpState
	for {
		switch x.pumpStep(w, &st) {
		case stepAgain:
			continue
		case stepEnd:
			return
		}
		select {
		case <-x.signal:
		case now := <-ka.C:
			x.mu.Lock()
			inlineAt := x.inlineAt
			x.mu.Unlock()
			next, err := x.keepAliveTurn(w, &st, now.Sub(monoEpoch), inlineAt)
			if err != nil {
				x.cancel(writeCause(err))
				return
			}
			ka.Reset(next)
		}
	}
}

// What pumpStep found.
const (
	stepAgain = iota // it wrote a batch: look again
	stepIdle         // nothing to write: wait for a wake or the keep-alive
	stepEnd          // the stream is over (reply written, client gone, write failed)
)

// pumpStep takes what is queued and writes it.
func (x *exchange) pumpStep(w sseWriter, st *pumpState) int {
	x.mu.Lock()
	batch := x.queue
	if len(batch) > 0 {
		x.s.gauges.queued.Add(-int64(len(batch)))
	}
	x.queue = x.spare[:0]
	x.spare = nil
	x.keys = x.keys[:0]
	x.pumpBusy = len(batch) > 0 // Notify queues behind the batch
	done := x.replied && len(batch) == 0
	gone := x.gone
	ended := x.ended
	x.mu.Unlock()

	if gone != nil {
		x.cancel(gone)
		x.putSpare(batch)
		return stepEnd
	}
	if len(batch) > 0 {
		err := x.writeIdle(w, batch, st)
		x.putSpare(batch)
		if err != nil {
			x.s.stats.StreamWriteErrors.Add(1)
			x.cancel(writeCause(err))
			return stepEnd
		}
		return stepAgain
	}
	x.putSpare(batch)
	if done || (ended && !x.hasReplied()) {
		return stepEnd
	}
	return stepIdle
}

// keepAliveTurn is the keep-alive timer's turn at now: a comment is
// written if nothing has been for KeepAlive (events written inline at
// inlineAt count) and nothing waits in the queue, which the pump writes
// next instead. It returns when the timer is due again.
func (x *exchange) keepAliveTurn(w sseWriter, st *pumpState, now, inlineAt time.Duration) (time.Duration, error) {
	ka := x.s.cfg.KeepAlive
	last := max(st.lastWrite, inlineAt) // events written inline count as traffic
	if idle := now - last; idle < ka {
		return ka - idle, nil
	}
	x.mu.Lock()
	busy := len(x.queue) > 0
	x.pumpBusy = !busy // the comment goes out alone, or after the queue
	x.mu.Unlock()
	if busy {
		return ka, nil
	}
	if err := x.writeIdle(w, keepAliveComment, st); err != nil {
		return 0, err
	}
	x.s.stats.KeepAlives.Add(1)
	return ka, nil
}

// pumpState is the pump's write bookkeeping, in monoNow readings (0:
// none yet).
type pumpState struct {
	lastWrite, deadline time.Duration
}

// writeIdle writes and flushes b under the idle write deadline (C3),
// refreshing the deadline only when less than WriteIdleTimeout-1s is left.
func (x *exchange) writeIdle(w sseWriter, b []byte, st *pumpState) error {
	now := monoNow()
	if idle := x.s.cfg.WriteIdleTimeout; st.deadline-now < idle-min(time.Second, idle/2) {
		st.deadline = now + idle
		_ = w.SetWriteDeadline(monoEpoch.Add(st.deadline))
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	st.lastWrite = now
	return w.Flush()
}

// writeCause is why a stream whose write failed with err ends: its
// WriteIdleTimeout passed (errWriteIdle), or the client is gone.
func writeCause(err error) error {
	if isTimeout(err) {
		return errWriteIdle
	}
	return errClientGone
}

var keepAliveComment = []byte(": keep-alive\n\n")

func (x *exchange) hasReplied() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.replied
}

func (x *exchange) putSpare(b []byte) {
	x.mu.Lock()
	if x.spare == nil {
		x.spare = b[:0]
	}
	x.mu.Unlock()
}

// write writes and flushes one batch under an idle write deadline (never an
// absolute one, C3).
func (x *exchange) write(w sseWriter, b []byte) error {
	_ = w.SetWriteDeadline(time.Now().Add(x.s.cfg.WriteIdleTimeout))
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Flush()
}
