package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// DefaultGrace is how long in-flight requests may run after stdin ends.
const DefaultGrace = 2 * time.Second

// ErrOutputClosed reports that the peer closed our output (EPIPE).
var ErrOutputClosed = errors.New("stdio: output closed by the peer")

// Config configures the stdio binding. Zero values select the defaults;
// its limits follow the package's rule (see Limits in the package
// documentation): 0 is the default, negative is no limit unless the field
// says otherwise.
type Config struct {
	// Grace bounds how long in-flight requests may finish after the input
	// ends or ctx is done, before they are cancelled. Default DefaultGrace
	// (2 s). A process asked to stop must stop, so it cannot be unlimited:
	// a negative value is taken as 0, the default.
	Grace time.Duration
	// MaxLine is the largest accepted message in bytes, the first line
	// seen by Upgrade included; a longer line is answered -32600 and
	// skipped (engine.Stats.LinesTooLong). Default framing.DefaultMaxLine
	// (4 MiB); negative means unlimited (unsafe).
	MaxLine int
	// MaxPending bounds output queued for a peer that does not read, in
	// bytes; past it the connection ends as a slow consumer
	// (engine.Stats.SlowConsumers). Default linestream.DefaultMaxPending
	// (64 MiB); negative means unlimited (unsafe).
	MaxPending int
	// Logger receives transport logs (never protocol traffic); nil discards.
	Logger *slog.Logger
	// Upgrade, when set, sees the connection's first message (one line,
	// without its newline) before the engine does. If it returns a serve
	// function, that function serves the whole connection instead, the
	// first message included in its input; ctx ending closes the input
	// (when it is an io.Closer). For example transport/legacy's
	// Server.StdioUpgrade switches a connection that begins with
	// initialize to 2025-11-25. Nil, or a nil result: the connection is
	// served by the engine as always.
	Upgrade func(first []byte) func(ctx context.Context, in io.Reader, out io.Writer) error
	// Queued, when set, reports the output queued for the peer and not yet
	// written while the connection is served (a metrics gauge reads it).
	Queued *Queued
}

// Queued reports the output bytes a stdio connection has queued for its
// peer and not yet written: give it to Serve or ServeConn in
// Config.Queued and read Bytes from any goroutine (a metrics scrape). It
// reads 0 before the connection is served and after it ends.
type Queued struct {
	c atomic.Pointer[linestream.Conn]
}

// Bytes returns the bytes queued now.
func (q *Queued) Bytes() int {
	if c := q.c.Load(); c != nil {
		return c.Pending()
	}
	return 0
}

func (o Config) grace() time.Duration {
	if o.Grace <= 0 {
		return DefaultGrace
	}
	return o.Grace
}

// Serve runs srv over the process's stdin and stdout. It first protects the
// protocol stream (see ProtectStdout). It returns nil when stdin ends,
// ErrOutputClosed when stdout is closed by the peer, ctx.Err() when ctx
// ends. It stops only this transport: the engine is shut down by whoever
// created it.
func Serve(ctx context.Context, srv *engine.Server, opt Config) error {
	out, err := ProtectStdout()
	if err != nil {
		return err
	}
	defer out.Close()
	return ServeConn(ctx, srv, os.Stdin, out, opt)
}

// ServeConn runs srv over an input and output pair (a pipe pair, a child's
// stdio, a test harness). When ctx ends, in is closed if it is an
// io.Closer, to unblock the reader, and in-flight requests get the grace
// period.
func ServeConn(ctx context.Context, srv *engine.Server, in io.Reader, out io.Writer, opt Config) (result error) {
	if opt.Upgrade != nil {
		first, rest, err := firstLine(ctx, in, opt.MaxLine)
		if err != nil {
			return err
		}
		if serve := opt.Upgrade(bytes.TrimRight(first, "\r\n")); serve != nil {
			stop := context.AfterFunc(ctx, func() { closeInput(in) })
			defer stop()
			return serve(ctx, rest, out)
		}
		in = rest
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &driver{
		Signals: linestream.NewSignals(),
		out:     out,
		quit:    make(chan struct{}),
	}
	// Requests are cancelled by the connection (notifications/cancelled,
	// the end of the grace period), not by ctx: ctx ending starts the
	// graceful stop below.
	var ld linestream.Driver = d
	if w := nonBlockingOut(out); w != nil {
		// The output can be written without blocking: the reader writes
		// what it produced itself, and wakes the writer only for what the
		// peer did not take at once.
		ld = &tryDriver{driver: d, w: w}
	}
	sc := engine.NewScope(srv, "stdio")
	c := linestream.New(sc, ld, linestream.Config{
		MaxLine: opt.MaxLine, MaxPending: opt.MaxPending, Logger: log,
		HandOffOutput: true, // the reader never blocks on stdout
	}, ctx, nil)
	ci := sc.ConnOpen(nil, nil)
	c.SetConnInfo(ci)
	if opt.Queued != nil {
		opt.Queued.c.Store(c)
		defer opt.Queued.c.Store(nil)
	}
	defer func() { sc.ConnClose(ci, result) }()

	writerDone := make(chan struct{})
	stopWriter := make(chan struct{})
	go d.writeLoop(c, stopWriter, writerDone)
	readDone := make(chan error, 1)
	go func() { readDone <- d.readLoop(in, c) }()

	var rerr error
	stopped := false // the reader may still be blocked in Read
	select {
	case rerr = <-readDone:
	case <-ctx.Done():
		rerr, stopped = ctx.Err(), true
	case <-d.Aborted():
		stopped = true
	}
	if stopped {
		_ = closeInput(in)
	}

	// No more input: listen streams complete at once, the rest may finish
	// within the grace period.
	gctx, cancel := context.WithTimeout(context.Background(), opt.grace())
	if err := c.Drain(gctx); err != nil {
		log.Warn("in-flight requests cancelled at the end of the grace period", "grace", opt.grace())
	}
	cancel()
	close(d.quit) // a reader still waiting for a resume gives up
	close(stopWriter)
	<-writerDone
	werr := c.Flush() // what the last requests wrote, on this goroutine
	c.Close(nil)
	if stopped {
		// The reader may still be blocked in Read on an input that closing
		// does not interrupt (a blocking stdin); wait for it only briefly.
		select {
		case <-readDone:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := d.Err(); err != nil {
		if isClosedOutput(err) {
			return ErrOutputClosed
		}
		return err
	}
	if rerr != nil {
		return rerr
	}
	if werr != nil && werr != linestream.ErrClosed {
		if isClosedOutput(werr) {
			return ErrOutputClosed
		}
		return werr
	}
	return nil
}

// firstLine reads the first line of in (at most about maxLine bytes, with
// its newline when there is one) and returns it with a reader that yields
// the whole input again, the first line included, and closes in when
// closed. maxLine is Config.MaxLine: 0 is the default, negative no limit.
func firstLine(ctx context.Context, in io.Reader, maxLine int) ([]byte, io.Reader, error) {
	switch {
	case maxLine == 0:
		maxLine = framing.DefaultMaxLine
	case maxLine < 0:
		maxLine = math.MaxInt
	}
	stop := context.AfterFunc(ctx, func() { closeInput(in) })
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	var err error
	for {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull || len(line) > maxLine {
			break
		}
	}
	stop()
	if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, err
	}
	return line, &rejoined{Reader: io.MultiReader(bytes.NewReader(line), br), in: in}, nil
}

// rejoined is the input after firstLine: the first line again, then the
// rest; Close closes the original input.
type rejoined struct {
	io.Reader
	in io.Reader
}

func (r *rejoined) Close() error { return closeInput(r.in) }

func closeInput(in io.Reader) error {
	if c, ok := in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func isClosedOutput(err error) bool {
	return brokenPipe(err) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe)
}

// driver is the stdio side of a linestream.Conn: a reader goroutine that
// blocks in Read (and stops reading while the Conn is paused, which is real
// backpressure on the pipe) and a writer goroutine that writes what is
// queued, in one write per batch. The reader never blocks on the output: it
// keeps reading — and sees EOF and cancellations — while the peer is slow to
// read, and the output waiting is bounded by MaxPending. When the output is
// non-blocking (a pipe: see ProtectStdout), the reader writes its own
// answers as far as the pipe takes them at once, and wakes the writer only
// for the rest.
type driver struct {
	*linestream.Signals // WakeOutput wakes the writer, WakeInput the paused reader
	out                 io.Writer
	quit                chan struct{} // closed when ServeConn is done with the connection
}

func (d *driver) Write(b []byte) (int, error) { return d.out.Write(b) }

// tryDriver is the driver of an output that can be written without
// blocking (linestream.TryWriter).
type tryDriver struct {
	*driver
	w *rawWriter
}

func (t *tryDriver) TryWrite(b []byte) (int, error) { return t.w.tryWrite(b) }

func (d *driver) writeLoop(c *linestream.Conn, stop, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-d.Out:
			_ = c.Flush()
		case <-stop:
			return
		}
	}
}

// yieldEvery is how often a busy reader yields (runtime.Gosched) between
// reads. A goroutine that loops on blocking reads is never rescheduled, so
// the runtime's monitor thread (sysmon) finds the same goroutine on its P
// at every check: past 10 ms it preempts it, takes the P back from the
// read system call, and then polls every 20 µs for a millisecond before
// backing off again — about 2 wake-ups of that thread per 1000 messages
// under mcpwire load 1x64 (profiles/README.stdio11.md). A yield well
// within the 10 ms lets it back off to its 10 ms period; it costs one
// wake-up of an idle thread per yield.
const yieldEvery = 5 * time.Millisecond

// yield is runtime.Gosched; tests count its calls.
var yield = runtime.Gosched

func (d *driver) readLoop(in io.Reader, c *linestream.Conn) error {
	buf := framing.AcquireBuf(framing.DefaultReadSize)[:framing.DefaultReadSize]
	defer func() {
		framing.ReleaseBuf(buf)
		c.ReleaseInput()
	}()
	yielded := time.Now()
	for {
		if now := time.Now(); now.Sub(yielded) >= yieldEvery {
			yielded = now
			yield()
		}
		n, err := in.Read(buf)
		if n > 0 {
			paused := c.Feed(buf[:n])
			for paused {
				// The in-flight bound is reached: read nothing until a
				// request ends (A19).
				select {
				case <-d.In:
					paused = c.Resume()
				case <-d.Aborted():
					return nil
				case <-d.quit:
					return nil
				}
			}
		}
		if err != nil {
			if err == io.EOF || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
				c.End()
				return nil
			}
			return err
		}
		select {
		case <-d.Aborted():
			return nil
		default:
		}
	}
}
