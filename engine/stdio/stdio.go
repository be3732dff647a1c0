package stdio

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
)

// DefaultGrace is how long in-flight requests may run after stdin ends.
const DefaultGrace = 2 * time.Second

// ErrOutputClosed reports that the peer closed our output (EPIPE).
var ErrOutputClosed = errors.New("stdio: output closed by the peer")

// Options configures the stdio binding. Zero values select the defaults.
type Options struct {
	// Grace bounds how long in-flight requests may finish after the input
	// ends or ctx is done, before they are cancelled. Default 2 s.
	Grace time.Duration
	// MaxLine is the largest accepted message in bytes. Default 4 MiB;
	// negative means unlimited (unsafe).
	MaxLine int
	// MaxPending bounds output queued for a peer that does not read; past it
	// the connection ends as a slow consumer. Default 64 MiB.
	MaxPending int
	// Logger receives transport logs (never protocol traffic); nil discards.
	Logger *slog.Logger
	// CloseOnTooLong ends the connection after answering an over-long
	// message (stream sockets do, like nats; stdio reads on).
	CloseOnTooLong bool
}

func (o Options) grace() time.Duration {
	if o.Grace <= 0 {
		return DefaultGrace
	}
	return o.Grace
}

// Serve runs srv over the process's stdin and stdout. It first protects the
// protocol stream (see ProtectStdout). It returns nil when stdin ends,
// ErrOutputClosed when stdout is closed by the peer, ctx.Err() when ctx ends.
func Serve(ctx context.Context, srv *engine.Server, opt Options) error {
	out, err := ProtectStdout()
	if err != nil {
		return err
	}
	defer out.Close()
	return ServeConn(ctx, srv, os.Stdin, out, opt)
}

// ServeConn runs srv over an input and output pair (a pipe pair, a child's
// stdio, a test harness). When ctx ends, in is closed if it is an io.Closer,
// to unblock the reader.
func ServeConn(ctx context.Context, srv *engine.Server, in io.Reader, out io.Writer, opt Options) error {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := framing.NewWriter(out, framing.WriterOptions{MaxPending: opt.MaxPending})
	// Requests are cancelled by the connection (notifications/cancelled,
	// end of the grace period), not by ctx directly: ctx ending starts the
	// graceful stop below.
	sc := srv.NewStreamConn(context.WithoutCancel(ctx), w, nil)
	defer sc.Close()

	readDone := make(chan error, 1)
	go func() { readDone <- readLoop(in, sc, opt) }()

	var rerr error
	stopped := false // the reader may still be blocked in Read
	select {
	case rerr = <-readDone:
	case <-ctx.Done():
		rerr, stopped = ctx.Err(), true
	case <-sc.Failed():
		stopped = true
	}
	if stopped {
		if c, ok := in.(io.Closer); ok {
			_ = c.Close()
		}
	}

	// No more input: let in-flight work finish within the grace period.
	gctx, cancel := context.WithTimeout(context.Background(), opt.grace())
	if err := sc.Drain(gctx); err != nil {
		log.Warn("in-flight requests cancelled at the end of the grace period", "grace", opt.grace())
	}
	cancel()
	werr := w.Close()
	if stopped {
		// The reader may still be blocked in Read on an input that closing
		// does not interrupt (a blocking stdin); wait for it only briefly.
		select {
		case <-readDone:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
			return ErrOutputClosed
		}
		return err
	}
	if rerr != nil {
		return rerr
	}
	if werr != nil && (errors.Is(werr, syscall.EPIPE) || errors.Is(werr, io.ErrClosedPipe)) {
		return ErrOutputClosed
	}
	return werr
}

func readLoop(in io.Reader, sc *engine.StreamConn, opt Options) error {
	r := framing.NewReader(in, framing.ReaderOptions{MaxLine: opt.MaxLine})
	defer r.Release()
	for {
		frame, err := r.Next()
		if err == framing.ErrLineTooLong {
			if sc.HandleTooLong() != nil || opt.CloseOnTooLong {
				return nil
			}
			continue
		}
		if err != nil {
			if err == io.EOF || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
				return nil
			}
			return err
		}
		if sc.HandleFrame(frame) != nil {
			return nil // the output failed: sc.Err says why
		}
	}
}
