package linestream

import (
	"bytes"
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultMaxPending   = framing.DefaultMaxPending // 64 MiB
	DefaultCancelBudget = 1024
	// DefaultBacklogSlack is what Config.MaxBacklog adds to MaxLine by
	// default: room for one largest line plus 1 MiB of pipelined requests.
	DefaultBacklogSlack = 1 << 20
)

// Config configures a Conn. Its limits follow the package's rule (see
// Limits in the package documentation): 0 is the default, negative is no
// limit.
type Config struct {
	// MaxLine is the largest accepted message in bytes (excluding the
	// newline). Default framing.DefaultMaxLine (4 MiB); negative means
	// unlimited (unsafe).
	MaxLine int
	// MaxPending bounds the output queued for a peer that does not read,
	// in bytes; past it the connection ends as a slow consumer (A18,
	// Stats.SlowConsumers). Default DefaultMaxPending (64 MiB); negative
	// means unlimited (unsafe).
	MaxPending int
	// MaxBacklog bounds the input a Conn keeps while it takes no frames (the
	// in-flight bound is reached, or the driver holds the input), in bytes;
	// past it the connection ends (Stats.InputOverflows). Only an event
	// loop, which cannot stop reading, ever reaches it. Default MaxLine +
	// DefaultBacklogSlack (1 MiB), with framing.DefaultMaxLine for an
	// unlimited MaxLine; negative means unlimited (unsafe).
	MaxBacklog int
	// CloseOnTooLong ends the connection after answering a line over
	// MaxLine (sockets do, like nats; stdio reads on).
	CloseOnTooLong bool
	// CancelBudget is how many more notifications/cancelled naming no
	// request in flight than requests served a peer may send before the
	// connection ends (C8, Stats.CancelFloods). Default
	// DefaultCancelBudget (1024); negative means unlimited.
	CancelBudget int
	// HandOffOutput makes Feed, Resume and End leave what they queued to
	// the driver's output side (WakeOutput) instead of writing it
	// themselves: for a driver whose Write blocks (stdio), so that its
	// reader keeps reading — and sees EOF, cancellations and the
	// MaxPending bound — while the peer is slow to read. An event loop,
	// whose writes never block, leaves it off and writes at once.
	HandOffOutput bool
	// Logger receives the connection's logs (never protocol traffic); nil
	// discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxLine == 0 {
		c.MaxLine = framing.DefaultMaxLine
	}
	switch {
	case c.MaxPending == 0:
		c.MaxPending = DefaultMaxPending
	case c.MaxPending < 0:
		c.MaxPending = math.MaxInt
	}
	switch {
	case c.MaxBacklog == 0:
		line := c.MaxLine
		if line < 0 {
			line = framing.DefaultMaxLine
		}
		c.MaxBacklog = line + min(DefaultBacklogSlack, math.MaxInt-line)
	case c.MaxBacklog < 0:
		c.MaxBacklog = math.MaxInt
	}
	if c.CancelBudget == 0 {
		c.CancelBudget = DefaultCancelBudget
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// maxInFlight is engine.Config.MaxInFlight as the Conn counts it: a
// negative value (no limit) and values past what an int32 holds become
// the largest int32.
func maxInFlight(n int) int32 {
	if n < 0 || n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(n)
}

// Driver is the transport under a Conn: a stdio process, or a socket on an
// event loop.
type Driver interface {
	// Write writes b (whole frames) to the peer. The Conn calls it from
	// Flush only, so never concurrently; a short count must come with an
	// error.
	Write(b []byte) (int, error)
	// WakeOutput asks the driver to call Flush soon from its output side.
	// It is called from any goroutine, possibly with engine locks held,
	// and must not block.
	WakeOutput()
	// WakeInput asks the driver to call Resume soon from its input side
	// (a request ended while the input was paused, or Admit opened it).
	// Same rules as WakeOutput.
	WakeInput()
	// Abort asks the driver to end the connection: the peer misbehaved or
	// stopped reading, or the output failed; err says why. Same rules as
	// WakeOutput. The driver then calls Close from its input side.
	Abort(err error)
}

// TryWriter is implemented by a driver whose Write may block (see
// Config.HandOffOutput) but which can also write without blocking:
// TryWrite writes what the peer takes at once — possibly nothing, which is
// not an error — and returns how much. The input side then writes its own
// answers and leaves only what did not fit to the output side, sparing it a
// wake-up in the common case. It is called by one flusher at a time.
type TryWriter interface {
	TryWrite(b []byte) (int, error)
}

// Errors that end a connection, passed to Driver.Abort.
var (
	// ErrSlowConsumer: more than MaxPending bytes of output are waiting.
	ErrSlowConsumer = framing.ErrSlowConsumer
	// ErrLineTooLong: a line over MaxLine, with CloseOnTooLong.
	ErrLineTooLong = framing.ErrLineTooLong
	// ErrInputOverflow: more than MaxBacklog bytes of input arrived while
	// the Conn took no frames.
	ErrInputOverflow = errors.New("linestream: input backlog over limit while the in-flight bound is reached")
	// ErrCancelFlood: notifications/cancelled for unknown requests beyond
	// the cancel budget (C8).
	ErrCancelFlood = errors.New("linestream: too many cancellations naming no request in flight")
	// ErrClosed: the connection was closed.
	ErrClosed = errors.New("linestream: connection closed")

	errShortWrite      = errors.New("linestream: short write")
	errCancelledByPeer = errors.New("linestream: cancelled by the client")
)

// Answers for messages that never become a request.
var (
	// ErrTooLarge is the answer to a line over MaxLine (A1): -32600 without
	// an id, since the id was never read.
	ErrTooLarge    = codec.NewError(codec.CodeInvalidRequest, "Invalid Request: message too large")
	errDuplicateID = codec.NewError(codec.CodeInvalidRequest, "Invalid Request: id is already in use by a request in flight")
)

var idSeed = maphash.MakeSeed()

// entry is one request in flight that did not complete where it was read
// (a worker runs it, or it is a listen stream): the in-flight table holds
// it for notifications/cancelled, duplicate ids and Drain.
type entry struct {
	r    *engine.Request // valid while the entry is in the table
	ref  engine.RequestRef
	hash uint64
	next *entry
}

var entryPool = sync.Pool{New: func() any { return new(entry) }}

// Conn is one line-framed connection bound to the engine. Its input side
// (Feed, Resume, End, Close) is driven by one goroutine at a time: the
// driver's reader or event loop. Flush may be called from the input side
// and from the driver's output side. Everything else is safe for
// concurrent use.
type Conn struct {
	scope     *engine.Scope
	srv       *engine.Server
	stats     *engine.Stats
	d         Driver
	ctx       context.Context
	principal any
	cfg       *Config // with defaults applied; shared by the connections of one Config (sharedConfig)
	maxDepth  int     // codec.PeekConfig.MaxDepth
	maxFlight int32
	try       TryWriter // the driver, when it can write without blocking

	// input side
	dec *framing.Decoder
	// drawn is how much of the cancel budget (C8) is spent: unknown
	// cancellations less the requests served since, never below 0. The
	// budget left is CancelBudget - drawn; a request served at a full
	// budget (drawn 0) stores nothing.
	drawn int

	stopped  atomic.Bool  // no more frames are taken (Drain, Close, fatal input error)
	aborted  atomic.Bool  // Driver.Abort was called
	held     atomic.Bool  // the driver holds the input (Hold/Admit)
	paused   atomic.Bool  // the input side stopped taking frames; Resume goes on
	wakeIn   atomic.Bool  // WakeInput was called and Resume has not run yet
	inflight atomic.Int32 // entries in the table
	closed   atomic.Bool

	tmu      sync.Mutex
	table    map[uint64]*entry
	draining bool
	idle     chan struct{} // signalled by Done while draining

	out outQueue
	// stage holds the answers given on the input side during a read
	// (ReplyInBatch, replyError), without the queue's lock; inputFlush
	// queues them at once. stageHint is the last read's stage size.
	stage     []byte
	stageHint int

	info *engine.ConnInfo // SetConnInfo; nil without hooks (cold: kept last)
}

// New binds a line-framed connection to the engine behind scope. ctx is
// the parent of every request context (its values reach handlers; its
// cancellation does not cancel requests: the Conn does that). principal is
// what the driver's authentication established (nil for none); see also
// Hold and Admit.
func New(scope *engine.Scope, d Driver, cfg Config, ctx context.Context, principal any) *Conn {
	shared := sharedConfig(cfg)
	srv := scope.Server()
	opt := srv.Config()
	if ctx.Done() != nil {
		// Only a context that can be cancelled needs the wrapper (an
		// allocation per connection).
		ctx = context.WithoutCancel(ctx)
	}
	c := &Conn{
		scope:     scope,
		srv:       srv,
		stats:     srv.Stats(),
		d:         d,
		ctx:       ctx,
		principal: principal,
		cfg:       shared,
		maxDepth:  opt.MaxDepth,
		maxFlight: maxInFlight(opt.MaxInFlight),
		dec:       framing.NewDecoder(framing.ReaderConfig{MaxLine: shared.MaxLine, ReadSize: 1}),
	}
	c.try, _ = d.(TryWriter)
	c.out.max = shared.MaxPending
	return c
}

// lastConfig is the Config the last New was given and its copy with
// defaults: a driver creates every connection with the same Config, so
// they share one copy instead of carrying 56 bytes each (issue 21 item 6).
var lastConfig atomic.Pointer[configPair]

type configPair struct{ in, out Config }

// sharedConfig returns cfg with defaults applied, shared when cfg is the
// Config of the previous call.
func sharedConfig(cfg Config) *Config {
	if p := lastConfig.Load(); p != nil && p.in == cfg {
		return &p.out
	}
	p := &configPair{in: cfg, out: cfg.withDefaults()}
	lastConfig.Store(p)
	return &p.out
}

// SetConnInfo links the connection's requests to ci (Call.Conn), what the
// driver got from engine.Scope.ConnOpen; nil is allowed. Call it before
// the first Feed.
func (c *Conn) SetConnInfo(ci *engine.ConnInfo) { c.info = ci }

// Hold makes the Conn keep the input it is fed (up to MaxBacklog) without
// taking frames, until Admit: for a driver that authenticates the peer off
// its event loop. Call it before the first Feed.
func (c *Conn) Hold() { c.held.Store(true) }

// Admit sets the principal established by the driver's authentication and
// lets the input held since Hold go on (the driver's input side is woken).
func (c *Conn) Admit(principal any) {
	c.principal = principal
	c.held.Store(false) // publishes principal to the input side
	c.wakeInputOnce()
}

// Feed hands the Conn the next chunk of input and handles every complete
// line in it; what it writes in answer leaves in one Flush before Feed
// returns. It reports whether the input is paused: the in-flight bound is
// reached or the driver holds the input. The chunk may be reused once Feed
// returns (the Conn copies what it keeps). A blocking reader should stop
// reading while paused and call Resume when woken; an event loop just goes
// on feeding, and the Conn keeps up to MaxBacklog bytes.
func (c *Conn) Feed(chunk []byte) (paused bool) {
	c.out.hold()
	if !c.stopped.Load() {
		c.dec.Feed(chunk)
		if !c.paused.Load() {
			c.pump()
		}
		c.detach()
	}
	c.inputFlush()
	return c.paused.Load()
}

// Resume goes on taking frames after a pause, if the cause has gone. The
// driver calls it from its input side after WakeInput. It reports whether
// the input is still paused.
func (c *Conn) Resume() (paused bool) {
	c.wakeIn.Store(false)
	if !c.paused.Load() || c.stopped.Load() {
		return c.paused.Load()
	}
	c.out.hold()
	c.paused.Store(false)
	c.pump()
	c.detach()
	c.inputFlush()
	return c.paused.Load()
}

// End tells the Conn that the input has ended: a last line without a
// newline is still served. The driver then usually calls Drain.
func (c *Conn) End() {
	c.out.hold()
	if !c.stopped.Load() {
		c.dec.End()
		if !c.paused.Load() {
			c.pump()
		}
		c.detach()
	}
	c.inputFlush()
}

// inputFlush ends the input side's hold: it queues the read's staged
// answers, then writes what was queued, or with HandOffOutput wakes the
// output side to do it. The stage joins the queue in the flush's own
// critical section (one lock for both).
func (c *Conn) inputFlush() {
	if !c.cfg.HandOffOutput {
		err := c.out.flush(c.takeStage(), c.d.Write)
		if err != nil && !c.closed.Load() {
			c.fail(err)
		}
		return
	}
	if c.try != nil {
		// Write here what the peer takes at once; wake the output side
		// only for what is left.
		wake, err := c.out.tryFlush(c.takeStage(), c.try.TryWrite)
		if err != nil && !c.closed.Load() {
			c.fail(err)
		}
		if wake {
			c.d.WakeOutput()
		}
		return
	}
	c.queueStage()
	if c.out.release() {
		c.d.WakeOutput()
	}
}

// takeStage hands over the read's stage (nil when nothing was staged),
// noting its size for the next read's.
func (c *Conn) takeStage() []byte {
	st := c.stage
	if st != nil {
		c.stageHint = min(len(st), maxHint)
		c.stage = nil
	}
	return st
}

// detach copies what is left of the current chunk, so the caller may
// reuse it, and enforces MaxBacklog on what the Conn holds.
func (c *Conn) detach() {
	c.dec.Feed(nil)
	if n := c.dec.Buffered(); n > c.cfg.MaxBacklog && !c.stopped.Load() {
		c.stats.InputOverflows.Add(1)
		c.cfg.Logger.Warn("input backlog over limit while requests are in flight; closing", "bytes", n, "limit", c.cfg.MaxBacklog)
		c.stop(ErrInputOverflow)
	}
}

// pump takes frames until the input runs out or must pause.
func (c *Conn) pump() {
	for c.pumpBatch() {
	}
}

// pumpBatch is pump with one engine.Batch: it takes frames until the input
// runs out or must pause, or a handler run inline panics. The panic is
// recovered here, once for the batch rather than once per request
// (Batch.SetRecovers): the request is answered -32603 in its place among
// the read's answers, and pumpBatch reports true so that pump goes on
// with the next frames in a new batch.
func (c *Conn) pumpBatch() (again bool) {
	// pre is the engine's request the next frame is peeked into (no
	// envelope copy); a frame that is not a request leaves it for the
	// next one.
	var pre *engine.Request
	// One batch per read (or resume): its requests' durations start at
	// the read and, for those that end here, stop at the end of pump,
	// just before their answers are flushed: two clock readings for the
	// read instead of one per request; they are registered for Shutdown
	// once, as the batch (engine.Batch).
	b := c.scope.StartBatch()
	b.SetReplier(c)       // answers given here go to c.stage (ReplyInBatch)
	b.SetRecovers()       // a handler's panic is recovered below
	b.SetStage(&c.stage)  // an inline request writes its answer in the stage's room
	b.SetDoneNeedsData()  // Done has only the table's entries to remove
	b.SetParent(c.ctx, c) // every request of the read has the same (BeginBound)
	// The peek's memo of the last params._meta is the batch's, kept with
	// it through its pool rather than one per connection (an idle
	// connection keeps no 0.5 KiB for it): what it holds is checked byte
	// for byte before it is used, so one left by another connection is as
	// good as this one's own.
	o := codec.PeekConfig{MaxDepth: c.maxDepth, Memo: b.PeekMemo()}
	defer func() {
		// Only a handler's panic is recovered (recover is not called for
		// any other: it goes on, with its own stack). Its request had
		// taken pre, and Recover ends it.
		if b.Panicking() && b.Recover(recover()) {
			pre, again = nil, true
		}
		if pre != nil {
			pre.Discard()
		}
		b.End()
	}()
	for !c.stopped.Load() {
		// Two tests, not one condition with ||: the usual read then takes
		// two loads and two branches (the || form computed a flag first).
		if c.held.Load() {
			if c.stall() {
				return
			}
			continue // the cause went away meanwhile
		}
		if c.inflight.Load() >= c.maxFlight {
			if c.stall() {
				return
			}
			continue
		}
		// A line that starts in the usual shape is read and framed by
		// one walk (codec.PeekLine finds its end); any other, and any
		// line PeekLine declines, goes to Next, then PeekWith. (Rest is
		// nil while a line that straddles reads is held: Next completes
		// it, and Rest has the next line; empty once the read is taken.)
		if rest := c.dec.Rest(); len(rest) != 0 {
			if pre == nil {
				pre = b.Prepare()
			}
			if n := codec.PeekLine(rest, pre.Envelope(), o); n >= 0 {
				frame := c.dec.TakeRest(rest, n) // the usual line, inlined
				if frame == nil {
					frame = c.dec.TakeLine(n)
				}
				if frame != nil {
					if c.handle(pre, b, frame, nil) {
						pre = nil
					}
					continue
				}
			}
		}
		frame, err := c.dec.Next()
		if err == framing.ErrLineTooLong {
			c.stats.LinesTooLong.Add(1)
			c.cfg.Logger.Debug("line over the size limit", "limit", c.cfg.MaxLine, "start", string(c.dec.LastTooLong()))
			c.replyError(nil, ErrTooLarge)
			if c.cfg.CloseOnTooLong {
				c.stop(ErrLineTooLong)
				return
			}
			continue
		}
		if frame == nil {
			return
		}
		if pre == nil {
			pre = b.Prepare()
		}
		if c.handle(pre, b, frame, &o) {
			pre = nil
		}
	}
	return false
}

// stall is pumpBatch's answer to a hold or the in-flight bound: it
// reports whether pumpBatch returns (nothing waits, or the input stays
// paused); false means the cause went away and the loop goes on.
func (c *Conn) stall() bool {
	if c.dec.Unread() == 0 {
		return true // nothing waits: no need to pause
	}
	return c.pauseInput()
}

// pauseInput marks the input paused, then checks the cause again: a
// request that ended in between saw no pause to wake. It reports whether
// the input stays paused.
func (c *Conn) pauseInput() bool {
	if !c.paused.Load() && !c.held.Load() {
		c.stats.InFlightStalls.Add(1)
	}
	c.paused.Store(true)
	if c.held.Load() || c.inflight.Load() >= c.maxFlight {
		return true
	}
	c.paused.Store(false)
	return false
}

// stop ends the input for a fatal reason and asks the driver to close.
func (c *Conn) stop(why error) {
	c.stopped.Store(true)
	c.abort(why)
}

// abort asks the driver, once, to end the connection; it reports whether
// this call did.
func (c *Conn) abort(why error) bool {
	if !c.closed.Load() && c.aborted.CompareAndSwap(false, true) {
		c.d.Abort(why)
		return true
	}
	return false
}

// handle processes one message, peeked into pre's envelope with o, or
// already peeked there (by codec.PeekLine) when o is nil. It reports
// whether the message was a request that took pre. Its parameters come
// in BeginBound's order, so that pre, b and frame stay in the registers
// they arrive in for that call.
func (c *Conn) handle(pre *engine.Request, b *engine.Batch, frame []byte, o *codec.PeekConfig) bool {
	env := pre.Envelope()
	// o is nil when PeekLine has peeked it: it takes only messages that
	// PeekWith reads without an error.
	if o != nil {
		if err := codec.PeekWith(frame, env, *o); err != nil {
			var ce *codec.Error
			if !errors.As(err, &ce) {
				ce = codec.ErrParse
			}
			c.countReject(ce)
			var id []byte
			if env.IDKind == codec.IDString || env.IDKind == codec.IDNumber {
				id = env.ID
			}
			c.replyError(id, ce)
			return false
		}
	}
	switch env.Kind {
	case codec.KindNotification:
		c.stats.Notifications.Add(1)
		if env.Method.EqualString("notifications/cancelled") && env.RequestID != nil {
			c.cancel(env.RequestID)
		}
		return false // other notifications are accepted and ignored (GEN-07)
	case codec.KindResponse:
		// Clients send no responses in this revision (STD-06); answering
		// one could start a loop with a confused peer, so it is counted.
		c.stats.Responses.Add(1)
		return false
	}
	if c.drawn > 0 {
		c.drawn-- // a request served earns back one cancel
	}
	r := c.scope.BeginBound(pre, b, frame, c.principal) // frame lives until the next frame; Start copies it
	if c.info != nil {
		r.SetConn(c.info)
	}
	if e := r.Check(); e != nil {
		r.Fail(e)
		return true
	}
	var h uint64
	if c.inflight.Load() > 0 {
		id := r.Envelope().ID
		h = maphash.Bytes(idSeed, id)
		if c.lookup(h, id) {
			c.stats.DuplicateIDs.Add(1)
			r.Fail(errDuplicateID)
			return true
		}
	}
	// An inline request runs here and ends before Start returns: nothing
	// can cancel it meanwhile, so it never enters the table. The usual
	// one, without a timeout, in one call (StartInline).
	if r.StartInline() {
		return true
	}
	if r.Inline() {
		// Its timeout's answer goes to the queue from the timer: the
		// answers to the read's earlier lines go first. (Its progress and
		// log notifications may still pass them: they answer nothing, and
		// a line's order binds answers only.)
		c.queueStage()
		r.Start()
		return true
	}
	if h == 0 {
		h = maphash.Bytes(idSeed, r.Envelope().ID)
	}
	e := entryPool.Get().(*entry)
	e.r, e.ref, e.hash = r, r.Ref(), h
	r.SetTransportData(e)
	c.insert(e)
	// Its answer (or its refusal) goes to the queue from any goroutine:
	// the answers to the read's earlier lines go first.
	c.queueStage()
	r.Start()
	return true
}

func (c *Conn) countReject(e *codec.Error) {
	switch {
	case e == codec.ErrTooDeep:
		c.stats.TooDeep.Add(1)
	case e.Code == codec.CodeParseError:
		c.stats.ParseErrors.Add(1)
	default:
		c.stats.InvalidRequests.Add(1)
	}
}

// replyError answers a message that never became a request, in the
// stage with the read's other answers (input side only).
func (c *Conn) replyError(id []byte, e *codec.Error) {
	b := codec.AppendErrorResponse(c.stageBuf(256), id, e)
	if bytes.IndexByte(b[len(c.stage):], '\n') >= 0 {
		return // as stageFrame's callers: a frame with a raw newline is dropped
	}
	c.stageFrame(b)
}

// queueStage moves the read's staged answers to the output queue (input
// side only): at the end of the read, and before a request of the read
// leaves for a worker or starts inline with a timeout, whose answer may
// go to the queue directly and must not pass the answers to the lines
// before it.
func (c *Conn) queueStage() {
	st := c.takeStage()
	if st == nil {
		return
	}
	if err := c.out.put(st); err != nil {
		c.fail(err)
	}
}

// stageBuf returns the stage, with room for at least n more bytes.
func (c *Conn) stageBuf(n int) []byte {
	if c.stage == nil {
		c.stage = framing.AcquireBuf(max(n+1, c.stageHint, minOut))
	}
	return c.stage
}

// stageFrame takes b, the stage with one frame appended, as the new
// stage, ending the frame with '\n'. The caller has made sure the frame
// holds no raw newline (dropping one that does: framing.ErrNewlineInFrame);
// past MaxPending the connection fails (ErrSlowConsumer).
func (c *Conn) stageFrame(b []byte) error {
	if len(b) >= c.out.max {
		// As appendFrame: the queue fails, and what waits is dropped
		// (the stage too, when inputFlush puts it).
		c.out.fail(ErrSlowConsumer)
		c.fail(ErrSlowConsumer)
		return ErrSlowConsumer
	}
	if cap(b) != cap(c.stage) {
		// append moved it: the old buffer goes back to the pool.
		framing.ReleaseBuf(c.stage)
	}
	c.stage = append(b, '\n')
	return nil
}

// send queues one frame, waking the output side or aborting as needed.
func (c *Conn) send(frame []byte) error {
	wake, err := c.out.appendFrame(frame)
	if wake {
		c.d.WakeOutput()
	}
	if err != nil && err != framing.ErrNewlineInFrame {
		c.fail(err)
	}
	return err
}

// fail ends the connection because its output failed. It may run inside a
// Replier call, with a request's lock held, so it cancels nothing itself:
// the driver closes the connection, and Close cancels what is in flight.
func (c *Conn) fail(err error) {
	if err == ErrClosed || c.closed.Load() {
		return
	}
	c.stopped.Store(true)
	if c.abort(err) && err == ErrSlowConsumer {
		c.stats.SlowConsumers.Add(1) // once, by whoever ended the connection
	}
}

// Flush writes everything queued with the driver's Write, unless another
// flusher is running (it then writes it). It returns the output's error,
// if any. The input side flushes at the end of each Feed and Resume; the
// driver's output side calls Flush after WakeOutput.
func (c *Conn) Flush() error {
	err := c.out.flush(nil, c.d.Write)
	if err != nil && !c.closed.Load() {
		c.fail(err)
	}
	return err
}

// Pending returns the output bytes queued and not yet handed to Write.
func (c *Conn) Pending() int { return c.out.pending() }

// Err returns why the connection's output failed (nil while it works).
func (c *Conn) Err() error { return c.out.error() }

// InFlight returns the requests in flight that did not complete where
// they were read (workers, listen streams).
func (c *Conn) InFlight() int { return int(c.inflight.Load()) }

// in-flight table ------------------------------------------------------

func (c *Conn) lookup(h uint64, id []byte) bool {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	for e := c.table[h]; e != nil; e = e.next {
		if string(e.r.Envelope().ID) == string(id) {
			return true
		}
	}
	return false
}

func (c *Conn) insert(e *entry) {
	c.tmu.Lock()
	if c.table == nil {
		c.table = make(map[uint64]*entry)
	}
	e.next = c.table[e.hash]
	c.table[e.hash] = e
	c.inflight.Add(1)
	c.tmu.Unlock()
}

// cancel handles notifications/cancelled for the raw request id; unknown
// ids are ignored (CAN-04) but draw on the cancel budget (C8).
func (c *Conn) cancel(id []byte) {
	h := maphash.Bytes(idSeed, id)
	var ref engine.RequestRef
	c.tmu.Lock()
	for e := c.table[h]; e != nil; e = e.next {
		if string(e.r.Envelope().ID) == string(id) {
			ref = e.ref
			break
		}
	}
	c.tmu.Unlock()
	if ref.Cancel(errCancelledByPeer) {
		return
	}
	c.stats.UnknownCancels.Add(1)
	if c.cfg.CancelBudget < 0 {
		return
	}
	if c.drawn++; c.drawn > c.cfg.CancelBudget {
		c.stats.CancelFloods.Add(1)
		c.cfg.Logger.Warn("cancellation flood: notifications/cancelled naming no request in flight beyond the budget; closing", "budget", c.cfg.CancelBudget)
		c.stop(ErrCancelFlood)
	}
}

// refs returns references to the requests in flight.
func (c *Conn) refs() []engine.RequestRef {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	out := make([]engine.RequestRef, 0, len(c.table))
	for _, e := range c.table {
		for ; e != nil; e = e.next {
			out = append(out, e.ref)
		}
	}
	return out
}

func (c *Conn) cancelAll(why error) {
	for _, r := range c.refs() {
		r.Abort(why)
	}
}

// disconnectAll cancels what is in flight because the connection is gone
// (engine.ErrDisconnected, for Outcome and Call.Cause); byPeer counts each
// running request as cancelled by the peer. It returns how many requests
// byPeer cancelled.
func (c *Conn) disconnectAll(why error, byPeer bool) int {
	refs := c.refs()
	if len(refs) == 0 {
		return 0
	}
	why = engine.Disconnected(why)
	n := 0
	for _, r := range refs {
		if byPeer && r.Cancel(why) {
			n++
			continue
		}
		r.Abort(why)
	}
	return n
}

// engine.Replier ------------------------------------------------------------

// Notify implements engine.Replier.
func (c *Conn) Notify(r *engine.Request, frame []byte) error { return c.send(frame) }

// Reply implements engine.Replier.
func (c *Conn) Reply(r *engine.Request, frame []byte, status int) error { return c.send(frame) }

// ReplyInBatch implements engine.BatchReplier: the answers of the
// requests that end on the input side during a read wait in the stage,
// taken without a lock, and join the output queue once, at the end of the
// read (inputFlush). Notifications still go to the queue at once, so a
// request's notifications given on any goroutine precede its response.
func (c *Conn) ReplyInBatch(r *engine.Request, frame []byte) error {
	n, end := len(c.stage), len(c.stage)+len(frame)
	if c.closed.Load() || !r.ReplyEscaped(frame) || end >= cap(c.stage) || end >= c.out.max {
		return c.replyStaged(r, frame)
	}
	// The usual case, stageFrame's in place: an answer the engine escaped
	// itself (it holds no raw newline), which fits the stage with its
	// newline under MaxPending. Only the stage's length is stored.
	c.stage = c.stage[:end+1]
	st := c.stage
	if len(frame) != 0 && &frame[0] != &st[n] {
		copy(st[n:], frame)
	} // else the engine wrote it where it goes (Batch.SetStage)
	st[end] = '\n'
	return nil
}

// replyStaged is ReplyInBatch for every other answer: the connection is
// closed, the frame may hold a raw newline, or it does not fit the stage.
func (c *Conn) replyStaged(r *engine.Request, frame []byte) error {
	if c.closed.Load() {
		return ErrClosed
	}
	// Only a frame with bytes the engine did not escape itself (a raw
	// result, an encoding it was handed) can hold a raw newline.
	if !r.ReplyEscaped(frame) && bytes.IndexByte(frame, '\n') >= 0 {
		return framing.ErrNewlineInFrame
	}
	return c.stageFrame(append(c.stageBuf(len(frame)), frame...))
}

// Done implements engine.Replier. It has work only for a request in the
// table (its transport data is the entry): the batch is told so
// (engine.Batch.SetDoneNeedsData), and requests that end in it without an
// entry are not handed here.
func (c *Conn) Done(r *engine.Request) {
	e, _ := r.TransportData().(*entry)
	if e == nil {
		return // ended where it was read, or failed validation
	}
	c.tmu.Lock()
	if p := c.table[e.hash]; p == e {
		if e.next == nil {
			delete(c.table, e.hash)
		} else {
			c.table[e.hash] = e.next
		}
	} else {
		for ; p != nil; p = p.next {
			if p.next == e {
				p.next = e.next
				break
			}
		}
	}
	if len(c.table) == 0 {
		c.table = nil // an idle connection keeps no map
	}
	c.inflight.Add(-1)
	if c.draining {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
	c.tmu.Unlock()
	*e = entry{}
	entryPool.Put(e)
	if c.paused.Load() {
		c.wakeInputOnce()
	}
}

func (c *Conn) wakeInputOnce() {
	if c.wakeIn.CompareAndSwap(false, true) {
		c.d.WakeInput()
	}
}

// ending -------------------------------------------------------------------

// Drain ends the connection's requests gracefully: it takes no more frames,
// completes listen streams with their final result at once (SUB-10), and
// lets the other requests finish until ctx ends; then it cancels them. It
// returns nil when none is left, ctx.Err() otherwise. The answers are
// queued: the driver flushes them (the output side is woken) and then
// closes. Drain may be called from any goroutine.
func (c *Conn) Drain(ctx context.Context) error {
	c.stopped.Store(true)
	c.tmu.Lock()
	c.draining = true
	if c.idle == nil {
		c.idle = make(chan struct{}, 1)
	}
	c.tmu.Unlock()
	for _, r := range c.refs() {
		r.EndStream()
	}
	for c.inflight.Load() > 0 {
		select {
		case <-c.idle:
		case <-ctx.Done():
			c.cancelAll(context.Cause(ctx))
			return ctx.Err()
		}
	}
	return nil
}

// Close ends the connection at once: the peer is gone or the driver closed
// it. Requests in flight are cancelled (a disconnect is a cancellation) and
// nothing more is written. It may be called from any goroutine and is
// idempotent; the input side then calls ReleaseInput.
func (c *Conn) Close(why error) {
	c.close(why, false)
}

// CloseByPeer is Close for a connection its peer ended (EOF, reset): each
// request still running is cancelled as by the peer, counted in the
// engine's Stats.Cancelled as a notifications/cancelled would be. It
// returns how many were, so the driver can count the disconnect.
func (c *Conn) CloseByPeer(why error) int {
	return c.close(why, true)
}

func (c *Conn) close(why error, byPeer bool) int {
	if !c.closed.CompareAndSwap(false, true) {
		return 0
	}
	if why == nil {
		why = ErrClosed
	}
	c.stopped.Store(true)
	c.out.fail(ErrClosed)
	return c.disconnectAll(why, byPeer)
}

// ReleaseInput gives the input side's buffers back to the pool; what it
// held is dropped. Call it from the input side once it feeds no more.
func (c *Conn) ReleaseInput() {
	c.stopped.Store(true)
	c.dec.Release()
	framing.ReleaseBuf(c.stage)
	c.stage = nil
}
