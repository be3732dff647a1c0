package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
)

// Dialer opens one byte stream to a server: a spawned process's stdin and
// stdout (client/stdio: Command.Dial), a TCP or Unix socket (client/socket:
// Dialer). Close
// on the stream ends it (for a process: the STD-11 stop sequence).
type Dialer func(ctx context.Context) (io.ReadWriteCloser, error)

// LineConfig configures a LineTransport. Zero values give the defaults;
// its limits follow the package's rule (see Limits in the package
// documentation): 0 is the default, negative is no limit unless the field
// says otherwise.
type LineConfig struct {
	// MaxLine is the largest message accepted from the server, in bytes.
	// Default framing.DefaultMaxLine (4 MiB); negative means unlimited
	// (unsafe). A longer line is skipped and counted (TooLong); the
	// request it answered fails with ErrTooLarge.
	MaxLine int
	// NoReconnect: a lost connection is not re-dialled; later calls fail
	// with ErrClosed. Default: re-dial (a crashed stdio server is restarted,
	// STD-14) with exponential backoff.
	NoReconnect bool
	// MinBackoff and MaxBackoff bound the wait before re-dialling after a
	// connection that died within 5 s of being made. Defaults
	// DefaultMinBackoff (100 ms) and DefaultMaxBackoff (10 s). They pace
	// re-dials rather than limit anything: a negative value is taken as
	// 0, the default.
	MinBackoff, MaxBackoff time.Duration
	// MaxQueued bounds the unread messages of one exchange. Default
	// DefaultMaxQueued (4096); negative means unlimited (unsafe). Past it
	// a call's notifications are dropped (counted in Dropped) and a listen
	// stream fails with ErrSlowConsumer.
	MaxQueued int
	// Logger receives stray lines, restarts and log notifications that
	// belong to no request. Default slog.Default().
	Logger *slog.Logger
	// OnUnmatched, when set, receives a copy of each JSON-RPC message that
	// belongs to no open request: replies after a cancel (CAN-05), error
	// replies without an id (a -32700 for a line the server could not
	// parse), a legacy server's unsolicited notifications. It runs on the
	// reading goroutine: return quickly.
	OnUnmatched func(msg []byte)
}

// LineStats counts what a LineTransport saw.
type LineStats struct {
	Dials      uint64 // connections made (1 + restarts)
	Lost       uint64 // connections that ended under us
	StrayLines uint64 // lines that were not JSON-RPC, skipped
	TooLong    uint64 // lines over MaxLine, skipped
	Unmatched  uint64 // replies and notifications for no open request (late after a cancel, CAN-05)
	Dropped    uint64 // notifications of a call dropped because MaxQueued were unread
}

// LineTransport is the Transport for newline-delimited JSON-RPC over one
// byte stream (stdio, TCP, Unix sockets; STD-02, CUST-04). It matches
// replies by id, progress by token and listen notifications by their
// subscription id (STD-08). When the stream ends it fails what was in
// flight with ErrDropped and, unless NoReconnect, dials again on the next
// request (a subscription re-listens at once).
type LineTransport struct {
	dial Dialer
	o    LineConfig
	hook ConnectHook

	mu         sync.Mutex
	cur        *lineConn
	hs         *lineConn     // connection whose hook is running
	connecting chan struct{} // closed when the dial in progress ends
	quick      int           // consecutive connections that died young
	used       bool          // a connection was made before
	closed     bool

	dials, lost, stray, tooLong, unmatched, dropped atomic.Uint64
}

// NewLineTransport returns a transport that dials with d on first use.
func NewLineTransport(d Dialer, o LineConfig) *LineTransport {
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxQueued = limit(o.MaxQueued, DefaultMaxQueued)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &LineTransport{dial: d, o: o}
}

// SetConnectHook installs the hook run on each new connection.
func (t *LineTransport) SetConnectHook(h ConnectHook) {
	t.mu.Lock()
	t.hook = h
	t.mu.Unlock()
}

// Stats returns the counters.
func (t *LineTransport) Stats() LineStats {
	return LineStats{Dials: t.dials.Load(), Lost: t.lost.Load(), StrayLines: t.stray.Load(),
		TooLong: t.tooLong.Load(), Unmatched: t.unmatched.Load(), Dropped: t.dropped.Load()}
}

// Connect makes sure a connection is up; fresh reports a new one.
func (t *LineTransport) Connect(ctx context.Context) (bool, error) {
	_, fresh, err := t.conn(ctx, false)
	return fresh, err
}

// conn returns the live connection, dialling one when there is none.
func (t *LineTransport) conn(ctx context.Context, handshake bool) (*lineConn, bool, error) {
	for {
		t.mu.Lock()
		switch {
		case t.closed:
			t.mu.Unlock()
			return nil, false, ErrClosed
		case handshake && t.hs != nil:
			c := t.hs
			t.mu.Unlock()
			return c, false, nil
		case t.cur != nil && !t.cur.isDead():
			c := t.cur
			t.mu.Unlock()
			return c, false, nil
		case t.connecting != nil:
			ch := t.connecting
			t.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, false, fmt.Errorf("%w: %v", ErrNotDelivered, ctx.Err())
			}
		case t.used && t.o.NoReconnect:
			t.mu.Unlock()
			return nil, false, fmt.Errorf("%w: connection lost", ErrClosed)
		}
		ch := make(chan struct{})
		t.connecting = ch
		var wait time.Duration
		if t.quick > 0 {
			wait = min(t.o.MinBackoff<<min(t.quick-1, 16), t.o.MaxBackoff)
		}
		hook := t.hook
		t.mu.Unlock()

		c, err := t.connect(ctx, wait, hook)
		t.mu.Lock()
		t.connecting = nil
		t.hs = nil
		if err == nil {
			if t.closed {
				err = ErrClosed
				c.close(ErrClosed)
			} else {
				t.cur, t.used = c, true
			}
		}
		close(ch)
		t.mu.Unlock()
		if err != nil {
			return nil, false, err
		}
		return c, true, nil
	}
}

func (t *LineTransport) connect(ctx context.Context, wait time.Duration, hook ConnectHook) (*lineConn, error) {
	if wait > 0 {
		t.o.Logger.Info("client: reconnecting after a backoff", "wait", wait)
		tm := time.NewTimer(wait)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return nil, fmt.Errorf("%w: %v", ErrNotDelivered, ctx.Err())
		}
	}
	rwc, err := t.dial(ctx)
	if err != nil {
		t.mu.Lock()
		t.quick++
		t.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrNotDelivered, err)
	}
	t.dials.Add(1)
	c := newLineConn(t, rwc)
	if hook != nil {
		t.mu.Lock()
		t.hs = c
		t.mu.Unlock()
		if err := hook(ctx); err != nil {
			c.close(err)
			return nil, fmt.Errorf("%w: connect hook: %v", ErrNotDelivered, err)
		}
	}
	return c, nil
}

// lost is called by a connection whose stream ended.
func (t *LineTransport) connLost(c *lineConn, young bool) {
	t.lost.Add(1)
	t.mu.Lock()
	if young {
		t.quick++
	} else {
		t.quick = 0
	}
	if t.cur == c {
		t.cur = nil
	}
	t.mu.Unlock()
}

// Open implements Transport.
func (t *LineTransport) Open(ctx context.Context, out *Outgoing) (Exchange, error) {
	c, _, err := t.conn(ctx, out.Handshake)
	if err != nil {
		return nil, err
	}
	overflow := OverflowDrop
	if out.Listen {
		overflow = OverflowFail
	}
	ex := &lineExchange{c: c, id: string(out.ID), token: string(out.Token), listen: out.Listen,
		in: Inbox{Max: t.o.MaxQueued, Overflow: overflow}}
	if !c.register(ex) {
		return nil, fmt.Errorf("%w: connection lost", ErrNotDelivered)
	}
	if err := c.write(out.Body); err != nil {
		c.unregister(ex)
		return nil, fmt.Errorf("%w: %v", ErrNotDelivered, err)
	}
	return ex, nil
}

// Notify implements Transport.
func (t *LineTransport) Notify(ctx context.Context, out *Outgoing) error {
	c, _, err := t.conn(ctx, out.Handshake)
	if err != nil {
		return err
	}
	return c.write(out.Body)
}

// Close ends the current connection (a spawned server is stopped) and
// fails every open exchange with ErrClosed.
func (t *LineTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	c := t.cur
	t.cur = nil
	t.mu.Unlock()
	if c != nil {
		return c.close(ErrClosed)
	}
	return nil
}

// lineConn is one connection: a reader goroutine routes each line.
type lineConn struct {
	t   *LineTransport
	rwc io.ReadWriteCloser
	at  time.Time

	wmu  sync.Mutex
	wbuf []byte

	mu      sync.Mutex
	byID    map[string]*lineExchange
	byToken map[string]*lineExchange
	dead    bool
	err     error

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
}

func newLineConn(t *LineTransport, rwc io.ReadWriteCloser) *lineConn {
	c := &lineConn{t: t, rwc: rwc, at: time.Now(), byID: map[string]*lineExchange{},
		byToken: map[string]*lineExchange{}, done: make(chan struct{})}
	go c.readLoop()
	return c
}

func (c *lineConn) isDead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

func (c *lineConn) register(ex *lineExchange) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	c.byID[ex.id] = ex
	if ex.token != "" {
		c.byToken[ex.token] = ex
	}
	return true
}

func (c *lineConn) unregister(ex *lineExchange) {
	c.mu.Lock()
	if c.byID[ex.id] == ex {
		delete(c.byID, ex.id)
	}
	if ex.token != "" && c.byToken[ex.token] == ex {
		delete(c.byToken, ex.token)
	}
	c.mu.Unlock()
}

// write sends one message and its '\n' in one write (STD-02).
func (c *lineConn) write(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("client: message contains a raw newline (STD-02)")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = append(append(c.wbuf[:0], msg...), '\n')
	_, err := c.rwc.Write(c.wbuf)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil
	}
	return err
}

// close ends the stream; in-flight exchanges fail with err.
func (c *lineConn) close(err error) error {
	c.fail(err)
	c.closeOnce.Do(func() { c.closeErr = c.rwc.Close() })
	return c.closeErr
}

// fail marks the connection dead and ends every exchange with err.
func (c *lineConn) fail(err error) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	c.dead, c.err = true, err
	exs := c.byID
	c.byID, c.byToken = map[string]*lineExchange{}, map[string]*lineExchange{}
	c.mu.Unlock()
	for _, ex := range exs {
		ex.in.End(err)
	}
}

func (c *lineConn) readLoop() {
	defer close(c.done)
	r := framing.NewReader(c.rwc, framing.ReaderConfig{MaxLine: c.t.o.MaxLine})
	defer r.Release()
	var env codec.Envelope
	for {
		line, err := r.Next()
		if err != nil {
			if errors.Is(err, framing.ErrLineTooLong) {
				c.t.tooLong.Add(1)
				snip := r.LastTooLong()
				c.t.o.Logger.Warn("client: server sent a line over the limit; skipped", "snippet", fmt.Sprintf("%q", snip))
				c.failTooLong(snip)
				continue
			}
			break
		}
		c.route(line, &env)
	}
	young := time.Since(c.at) < 5*time.Second
	c.mu.Lock()
	wasDead := c.dead
	c.mu.Unlock()
	if !wasDead {
		c.t.o.Logger.Warn("client: server connection ended", "lived", time.Since(c.at).Round(time.Millisecond))
		c.t.connLost(c, young)
	}
	c.close(ErrDropped)
}

// failTooLong fails the request an over-long reply answered, when the
// reply's id is within the line's first bytes (ids this client makes are
// short integers, so it is).
func (c *lineConn) failTooLong(snip []byte) {
	i := bytes.Index(snip, []byte(`"id":`))
	if i < 0 || bytes.Contains(snip[:i], []byte(`"method"`)) {
		return
	}
	rest := snip[i+5:]
	j := 0
	for j < len(rest) && (rest[j] == '-' || (rest[j] >= '0' && rest[j] <= '9')) {
		j++
	}
	if j == 0 || j == len(rest) {
		return // not an integer, or cut off
	}
	c.mu.Lock()
	ex := c.byID[string(rest[:j])]
	if ex != nil {
		delete(c.byID, ex.id)
		if ex.token != "" {
			delete(c.byToken, ex.token)
		}
	}
	c.mu.Unlock()
	if ex != nil {
		ex.in.End(ErrTooLarge)
	}
}

// route hands one line to the exchange it belongs to (STD-08).
func (c *lineConn) route(line []byte, env *codec.Envelope) {
	if err := codec.PeekWith(line, env, peekOpts); err != nil {
		c.t.stray.Add(1)
		c.t.o.Logger.Debug("client: skipped a line that is not JSON-RPC", "snippet", fmt.Sprintf("%.80q", line))
		return
	}
	var ex *lineExchange
	final := false
	c.mu.Lock()
	switch env.Kind {
	case codec.KindResponse:
		if env.ID != nil {
			ex = c.byID[string(env.ID)]
			final = true
		}
	case codec.KindNotification:
		switch env.Method.String() {
		case "notifications/progress":
			if tok, ok := codec.LookupPath(env.Params, "progressToken"); ok {
				ex = c.byToken[string(tok)]
			}
		case "notifications/cancelled":
			// SUB-11: the server ended a listen stream.
			if l := c.byID[string(env.RequestID)]; l != nil && l.listen {
				ex, final = l, true
			}
		default:
			if sid, ok := codec.LookupPath(env.Meta, "io.modelcontextprotocol/subscriptionId"); ok {
				ex = c.byID[string(sid)]
			}
		}
	case codec.KindRequest:
		c.mu.Unlock()
		c.answerServerRequest(env)
		return
	}
	if ex != nil && final {
		delete(c.byID, ex.id)
		if ex.token != "" {
			delete(c.byToken, ex.token)
		}
	}
	c.mu.Unlock()
	if ex == nil {
		c.unmatched(line, env)
		return
	}
	ex.push(append([]byte(nil), line...), final)
}

func (c *lineConn) unmatched(line []byte, env *codec.Envelope) {
	if f := c.t.o.OnUnmatched; f != nil {
		f(append([]byte(nil), line...))
	}
	if env.Kind == codec.KindNotification && env.Method.String() == "notifications/message" {
		// stdio has no per-request channel for log messages.
		c.t.o.Logger.Info("client: server log", "message", string(env.Params))
		return
	}
	c.t.unmatched.Add(1)
	c.t.o.Logger.Debug("client: message for no open request", "kind", env.Kind.String(), "snippet", fmt.Sprintf("%.80q", line))
}

// answerServerRequest answers what only a legacy server sends (GEN-08):
// ping with an empty result, anything else with -32601.
func (c *lineConn) answerServerRequest(env *codec.Envelope) {
	var b []byte
	if env.Method.String() == "ping" {
		b = codec.AppendResponse(nil, env.ID, []byte(`{}`))
	} else {
		b = codec.AppendErrorResponse(nil, env.ID, codec.NewError(codec.CodeMethodNotFound, "client does not accept server requests"))
	}
	_ = c.write(b)
}

// lineExchange is one request: the reading goroutine routes its messages
// into in. A call's notifications are advisory: past MaxQueued they are
// dropped and counted, the call goes on. A listen stream's are its
// content: past MaxQueued it fails with ErrSlowConsumer and is cancelled.
type lineExchange struct {
	c      *lineConn
	id     string
	token  string
	listen bool
	in     Inbox
}

func (ex *lineExchange) push(msg []byte, final bool) {
	if final {
		ex.in.Final(msg)
		return
	}
	switch ex.in.Push(msg) {
	case PushDropped:
		ex.c.t.dropped.Add(1)
	case PushFailed:
		ex.cancel()
	}
}

// Next implements Exchange.
func (ex *lineExchange) Next(ctx context.Context) ([]byte, error) { return ex.in.Next(ctx) }

// Close implements Exchange: before the response it sends
// notifications/cancelled (STD-10, SUB-09).
func (ex *lineExchange) Close() error {
	if ex.in.Cancel(ErrClosed) {
		ex.cancel()
	}
	return nil
}

func (ex *lineExchange) cancel() {
	ex.c.unregister(ex)
	if ex.c.isDead() {
		return
	}
	b := append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`), ex.id...)
	b = append(b, `,"reason":"cancelled by the client"}}`...)
	_ = ex.c.write(b)
}
