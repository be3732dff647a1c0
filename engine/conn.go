package engine

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
)

// FrameWriter is the outbound side of a stream connection: it writes one
// frame (a JSON-RPC message without newline). framing.Writer implements it.
// It must be safe for concurrent use.
type FrameWriter interface {
	WriteFrame(p []byte) error
}

// StreamConn runs the engine over one byte-stream connection (stdio, TCP,
// Unix socket): all server output shares the connection (STD-08),
// cancellation is notifications/cancelled (STD-10, CUST-05), and at most
// Options.MaxInFlight requests are in flight: HandleFrame blocks at the bound
// so the transport stops reading (A19).
//
// HandleFrame must be called from one goroutine at a time (the reader).
type StreamConn struct {
	srv       *Server
	w         FrameWriter
	ctx       context.Context
	principal any

	env   codec.Envelope // reused by the reader
	errb  []byte         // reused for synchronous error replies
	peek  codec.PeekOptions
	slots chan struct{}
	idle  chan struct{} // signalled when a call ends
	quit  chan struct{} // closed by Close
	dead  chan struct{} // closed when the output fails
	qonce sync.Once

	mu       sync.Mutex
	inflight map[uint64]*Call
	n        int
	werr     atomic.Pointer[error]
}

var idSeed = maphash.MakeSeed()

// NewStreamConn binds a stream connection whose output goes to w. ctx is the
// parent of every request context; principal is what the transport's
// authentication established (nil for stdio).
func (s *Server) NewStreamConn(ctx context.Context, w FrameWriter, principal any) *StreamConn {
	return &StreamConn{
		srv:       s,
		w:         w,
		ctx:       ctx,
		principal: principal,
		peek:      codec.PeekOptions{MaxDepth: s.opt.MaxDepth},
		slots:     make(chan struct{}, s.opt.MaxInFlight),
		idle:      make(chan struct{}, 1),
		quit:      make(chan struct{}),
		dead:      make(chan struct{}),
		inflight:  map[uint64]*Call{},
	}
}

// Err returns the first write error (the peer stopped reading or went
// away); the transport stops reading once it is set.
func (sc *StreamConn) Err() error {
	if p := sc.werr.Load(); p != nil {
		return *p
	}
	return nil
}

func (sc *StreamConn) fail(err error) {
	if sc.werr.CompareAndSwap(nil, &err) {
		if errors.Is(err, framing.ErrSlowConsumer) {
			sc.srv.stats.SlowConsumers.Add(1)
		}
		close(sc.dead)
		sc.CancelAll(err)
	}
}

// write sends a frame, recording the first error.
func (sc *StreamConn) write(frame []byte) error {
	if err := sc.w.WriteFrame(frame); err != nil {
		sc.fail(err)
		return err
	}
	return nil
}

// Failed is closed when the output has failed (see Err); the transport
// stops reading then.
func (sc *StreamConn) Failed() <-chan struct{} { return sc.dead }

// replyError answers a message that never became a Call.
func (sc *StreamConn) replyError(id []byte, e *codec.Error) error {
	sc.errb = codec.AppendErrorResponse(sc.errb[:0], id, e)
	return sc.write(sc.errb)
}

// ErrTooLarge is the answer to a frame over the size limit (A1): -32600
// without id, since the id was never read.
var ErrTooLarge = codec.NewError(codec.CodeInvalidRequest, "Invalid Request: message too large")

// HandleTooLong answers a frame that exceeded the size limit.
func (sc *StreamConn) HandleTooLong() error {
	sc.srv.stats.LinesTooLong.Add(1)
	return sc.replyError(nil, ErrTooLarge)
}

// HandleFrame processes one incoming message. Invalid messages are answered
// at once (-32700 without id, -32600 with the id when it was readable);
// requests are dispatched; notifications/cancelled cancels the named
// request. It blocks while MaxInFlight requests are in flight. It returns an
// error only when the connection cannot go on (a write failed).
func (sc *StreamConn) HandleFrame(frame []byte) error {
	if err := sc.Err(); err != nil {
		return err
	}
	env := &sc.env
	if err := codec.PeekWith(frame, env, sc.peek); err != nil {
		var ce *codec.Error
		if !errors.As(err, &ce) {
			ce = codec.ErrParse
		}
		sc.countReject(ce)
		var id []byte
		if env.IDKind == codec.IDString || env.IDKind == codec.IDNumber {
			id = env.ID
		}
		return sc.replyError(id, ce)
	}
	switch env.Kind {
	case codec.KindNotification:
		sc.srv.stats.Notifications.Add(1)
		if env.Method.EqualString("notifications/cancelled") && env.RequestID != nil {
			sc.cancel(env.RequestID)
		}
		return nil // other notifications are accepted and ignored (GEN-07)
	case codec.KindResponse:
		// Clients send no responses in this revision (STD-06); answering one
		// could start a loop with a confused peer, so it is only counted.
		sc.srv.stats.Responses.Add(1)
		return nil
	}

	// A request: wait for a slot (backpressure), then dispatch.
	select {
	case sc.slots <- struct{}{}:
	default:
		sc.srv.stats.InFlightStalls.Add(1)
		select {
		case sc.slots <- struct{}{}:
		case <-sc.ctx.Done():
			return sc.ctx.Err()
		case <-sc.quit:
			return ErrConnClosed
		}
	}
	c := sc.srv.Begin(sc.ctx, frame, env, sc, sc.principal)
	c.slotted = true
	if e := c.Check(); e != nil {
		c.Fail(e)
		return sc.Err()
	}
	if !sc.insert(c) {
		sc.srv.stats.DuplicateIDs.Add(1)
		c.Fail(errDuplicateID)
		return sc.Err()
	}
	c.Start()
	return sc.Err()
}

func (sc *StreamConn) countReject(e *codec.Error) {
	st := &sc.srv.stats
	switch {
	case e == codec.ErrTooDeep:
		st.TooDeep.Add(1)
	case e.Code == codec.CodeParseError:
		st.ParseErrors.Add(1)
	default:
		st.InvalidRequests.Add(1)
	}
}

func hashID(id []byte) uint64 { return maphash.Bytes(idSeed, id) }

// insert adds c to the in-flight table; false when its id is in use.
func (sc *StreamConn) insert(c *Call) bool {
	h := hashID(c.env.ID)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for o := sc.inflight[h]; o != nil; o = o.next {
		if string(o.env.ID) == string(c.env.ID) {
			return false
		}
	}
	c.idHash, c.listed = h, true
	c.next = sc.inflight[h]
	sc.inflight[h] = c
	sc.n++
	return true
}

func (sc *StreamConn) remove(c *Call) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	p := sc.inflight[c.idHash]
	if p == c {
		if c.next == nil {
			delete(sc.inflight, c.idHash)
		} else {
			sc.inflight[c.idHash] = c.next
		}
		sc.n--
		return
	}
	for ; p != nil; p = p.next {
		if p.next == c {
			p.next = c.next
			sc.n--
			return
		}
	}
}

// errCancelledByPeer is the cause of a cancellation by notifications/cancelled.
var errCancelledByPeer = errors.New("engine: cancelled by the client")

// cancel handles notifications/cancelled for the raw request id; unknown
// ids are ignored (CAN-04).
func (sc *StreamConn) cancel(id []byte) {
	h := hashID(id)
	sc.mu.Lock()
	var ref CallRef
	for o := sc.inflight[h]; o != nil; o = o.next {
		if string(o.env.ID) == string(id) {
			ref = o.Ref() // taken while the call is certainly this request
			break
		}
	}
	sc.mu.Unlock()
	if ref.c == nil || !ref.c.cancelGen(ref.gen, errCancelledByPeer) {
		sc.srv.stats.UnknownCancels.Add(1)
		return
	}
	sc.srv.stats.Cancelled.Add(1)
}

// ErrConnClosed is returned by HandleFrame after Close.
var ErrConnClosed = errors.New("engine: connection closed")

// Close stops the connection: a HandleFrame blocked on the in-flight bound
// returns ErrConnClosed, and every request in flight is cancelled.
// Idempotent.
func (sc *StreamConn) Close() {
	sc.qonce.Do(func() { close(sc.quit) })
	sc.CancelAll(ErrConnClosed)
}

// CancelAll cancels every request in flight on the connection.
func (sc *StreamConn) CancelAll(why error) {
	for _, r := range sc.snapshot() {
		r.cancelQuiet(why)
	}
}

// snapshot returns references to the calls in flight, taken while they
// are certainly in the table: a call that ends meanwhile is then left
// alone even if its Call already serves another request.
func (sc *StreamConn) snapshot() []CallRef {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	out := make([]CallRef, 0, sc.n)
	for _, c := range sc.inflight {
		for ; c != nil; c = c.next {
			out = append(out, c.Ref())
		}
	}
	return out
}

type listenRef struct {
	c   *Call
	sub *subscription
}

// listens returns the connection's listen streams with their
// subscriptions, read while the calls are certainly in the table.
func (sc *StreamConn) listens() []listenRef {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var out []listenRef
	for _, c := range sc.inflight {
		for ; c != nil; c = c.next {
			c.mu.Lock()
			if c.sub != nil {
				out = append(out, listenRef{c, c.sub})
			}
			c.mu.Unlock()
		}
	}
	return out
}

// InFlight returns the number of requests in flight.
func (sc *StreamConn) InFlight() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.n
}

// Drain is called when the peer will send nothing more (EOF). Listen
// streams are completed with their final result at once (SUB-10), other
// requests may finish until ctx ends; then they are cancelled. Drain returns
// when no request is in flight, or when ctx has ended and the remaining
// handlers were cancelled (a handler that ignores its context is not waited
// for).
func (sc *StreamConn) Drain(ctx context.Context) error {
	for _, l := range sc.listens() {
		l.c.finishDetached(true, l.sub)
	}
	for {
		if sc.InFlight() == 0 {
			return nil
		}
		select {
		case <-sc.idle:
		case <-ctx.Done():
			sc.CancelAll(errShutdown)
			return ctx.Err()
		}
	}
}

// Notify implements Replier.
func (sc *StreamConn) Notify(c *Call, frame []byte) error { return sc.write(frame) }

// Reply implements Replier.
func (sc *StreamConn) Reply(c *Call, frame []byte, status int) error { return sc.write(frame) }

// Done implements Replier.
func (sc *StreamConn) Done(c *Call) {
	if c.listed {
		sc.remove(c)
	}
	if c.slotted {
		<-sc.slots
	}
	select {
	case sc.idle <- struct{}{}:
	default:
	}
}
