package framing

import (
	"bytes"
	"io"
	"math"
	"sync"
)

const (
	// DefaultMaxPending is the default cap on bytes queued but not yet
	// written by a Writer.
	DefaultMaxPending = 64 << 20

	// minWriteBuf is the first pending buffer a Writer acquires.
	minWriteBuf = class4K

	// idleKeep is the largest pending buffer a Writer keeps once idle.
	idleKeep = class64K
)

// WriterConfig configures a Writer. Its fields follow the package's rule
// for limits (see Limits in the package documentation).
type WriterConfig struct {
	// MaxPending caps the bytes queued but not yet written (including the
	// batch being written), in bytes. A frame that would push the total
	// over it is refused with ErrSlowConsumer and the Writer fails
	// permanently. 0 means DefaultMaxPending (64 MiB). A negative value
	// disables the cap: memory then grows for as long as the peer does
	// not read, which is unsafe on an untrusted peer.
	MaxPending int
}

// Writer writes newline-terminated frames to an io.Writer. It is safe for
// concurrent use by many goroutines and has no goroutine of its own.
//
// It batches by group commit: WriteFrame appends the frame and a '\n' to a
// pending buffer under a mutex. If no write is in progress, the caller
// becomes the flusher: it swaps the pending buffer with a spare one and
// writes the batch with one Write call outside the lock, and loops while
// other goroutines queued more frames meanwhile. When nothing is pending it
// returns. A burst of frames from many goroutines thus becomes one Write, and
// the Writer is flushed whenever it goes idle: no timer is involved. The
// other callers only append and return, even while the flusher's Write
// blocks, until MaxPending is reached.
//
// Frames are never interleaved: each frame is written whole, in the order
// the WriteFrame calls took the lock. A nil error from WriteFrame means the
// frame is queued; a later write failure is reported by the following calls,
// by Flush and by Err. Buffers come from the pool; after a burst, buffers
// above 64 KiB go back once the Writer is idle.
//
// A Writer must not be copied after first use.
type Writer struct {
	mu   sync.Mutex
	cond sync.Cond // broadcast when a batch is written or the Writer fails

	w          io.Writer
	maxPending int

	pending []byte // frames queued, not yet handed to w
	spare   []byte // the other buffer; nil while the flusher owns it

	queued  uint64 // bytes ever queued
	written uint64 // bytes ever written, so queued-written are pending

	flushing bool  // a caller is running the flush loop
	closed   bool  // Close was called
	err      error // first write error or ErrSlowConsumer, sticky
}

// NewWriter returns a Writer writing to w applying opt.
func NewWriter(w io.Writer, opt WriterConfig) *Writer {
	wr := &Writer{w: w, maxPending: opt.MaxPending}
	switch {
	case wr.maxPending == 0:
		wr.maxPending = DefaultMaxPending
	case wr.maxPending < 0:
		wr.maxPending = math.MaxInt
	}
	wr.cond.L = &wr.mu
	return wr
}

// WriteFrame queues p followed by '\n' and, if no other caller is writing,
// writes everything queued before returning. It returns ErrNewlineInFrame
// (nothing queued) if p contains '\n', ErrClosed after Close, ErrSlowConsumer
// when the queue would exceed MaxPending, and otherwise the Writer's first
// write error once one has happened. p is copied; the caller may reuse it
// as soon as WriteFrame returns.
func (w *Writer) WriteFrame(p []byte) error {
	if bytes.IndexByte(p, '\n') >= 0 {
		return ErrNewlineInFrame
	}
	w.mu.Lock()
	if err := w.reserve(len(p) + 1); err != nil {
		w.mu.Unlock()
		return err
	}
	w.pending = append(w.pending, p...)
	w.pending = append(w.pending, '\n')
	return w.commit()
}

// QueueFrame queues p followed by '\n' like WriteFrame, but writes nothing
// itself: frames queued by one goroutine leave together, in one write, at
// its next Flush (or with a flush another caller is running). Errors are
// those of WriteFrame.
func (w *Writer) QueueFrame(p []byte) error {
	if bytes.IndexByte(p, '\n') >= 0 {
		return ErrNewlineInFrame
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.reserve(len(p) + 1); err != nil {
		return err
	}
	w.pending = append(w.pending, p...)
	w.pending = append(w.pending, '\n')
	return nil
}

// WriteFrameParts queues one frame made of the concatenation of parts (for
// fan-out: prefix, id, suffix), like WriteFrame. It does not allocate.
func (w *Writer) WriteFrameParts(parts ...[]byte) error {
	n := 1
	for _, p := range parts {
		if bytes.IndexByte(p, '\n') >= 0 {
			return ErrNewlineInFrame
		}
		n += len(p)
	}
	w.mu.Lock()
	if err := w.reserve(n); err != nil {
		w.mu.Unlock()
		return err
	}
	for _, p := range parts {
		w.pending = append(w.pending, p...)
	}
	w.pending = append(w.pending, '\n')
	return w.commit()
}

// reserve admits n more bytes into pending and makes room for them. Called
// with mu held.
func (w *Writer) reserve(n int) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	if uint64(n) > uint64(w.maxPending)-(w.queued-w.written) {
		w.fail(ErrSlowConsumer)
		return ErrSlowConsumer
	}
	w.queued += uint64(n)
	need := len(w.pending) + n
	if need > cap(w.pending) {
		nb := append(AcquireBuf(max(2*cap(w.pending), need, minWriteBuf)), w.pending...)
		ReleaseBuf(w.pending)
		w.pending = nb
	}
	return nil
}

// fail makes the Writer fail permanently with err (unless it already has)
// and drops what is queued. Called with mu held.
func (w *Writer) fail(err error) {
	if w.err != nil {
		return
	}
	w.err = err
	w.queued -= uint64(len(w.pending))
	ReleaseBuf(w.pending)
	w.pending = nil
	w.cond.Broadcast()
}

// commit is called with mu held after queuing; it unlocks. If a flush is in
// progress the frames just queued ride on it; otherwise the caller runs the
// flush loop.
func (w *Writer) commit() error {
	if w.flushing {
		w.mu.Unlock()
		return nil
	}
	err := w.flushLoop()
	w.mu.Unlock()
	return err
}

// flushLoop writes batches until nothing is pending or the Writer fails.
// Called with mu held and flushing false; returns with mu held. It returns
// the error that ended the loop, if any.
func (w *Writer) flushLoop() error {
	w.flushing = true
	for len(w.pending) > 0 && w.err == nil {
		batch := w.pending
		w.pending = w.spare[:0]
		w.spare = nil
		w.mu.Unlock()
		n, err := w.w.Write(batch)
		if err == nil && n != len(batch) {
			err = io.ErrShortWrite
		}
		w.mu.Lock()
		if n < 0 || n > len(batch) {
			n = 0 // a broken io.Writer; err is set (ErrShortWrite at least)
		}
		w.written += uint64(n)
		w.spare = batch[:0]
		if err != nil {
			w.queued -= uint64(len(batch) - n) // never to be written
			w.fail(err)
		}
		w.cond.Broadcast()
	}
	w.flushing = false
	w.idle()
	w.cond.Broadcast()
	return w.err
}

// idle gives buffers back once no flush is running: all of them if the
// Writer is done, those above idleKeep otherwise. Called with mu held.
func (w *Writer) idle() {
	if w.err != nil || w.closed {
		ReleaseBuf(w.pending)
		ReleaseBuf(w.spare)
		w.pending, w.spare = nil, nil
		return
	}
	if cap(w.pending) > idleKeep {
		ReleaseBuf(w.pending)
		w.pending = nil
	}
	if cap(w.spare) > idleKeep {
		ReleaseBuf(w.spare)
		w.spare = nil
	}
}

// Flush waits until every frame queued before the call is written, and
// returns the Writer's write error, if any (ErrClosed is not an error
// here). Flush blocks for as long as the io.Writer blocks; to give up, make
// the io.Writer fail (close the connection or set a deadline).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	target := w.queued
	if !w.flushing && len(w.pending) > 0 && w.err == nil {
		// Not reached in practice (the last queuer flushes), but cheap.
		w.flushLoop()
	}
	for w.written < target && w.err == nil {
		w.cond.Wait()
	}
	return w.err
}

// Close refuses further frames with ErrClosed, waits until what was queued
// is written, and gives the buffers back to the pool. It returns the
// Writer's write error, if any. Close is idempotent and safe to call
// concurrently; it does not close the underlying io.Writer. Like Flush, it
// waits for as long as the io.Writer blocks (it returns at once if the
// Writer has failed, ErrSlowConsumer included).
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	err := w.flushLocked()
	if !w.flushing {
		w.idle()
	}
	return err
}

// Err returns why the Writer refuses frames: its first write error or
// ErrSlowConsumer, else ErrClosed after Close, else nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// Pending returns the number of bytes queued but not yet written, including
// the batch being written.
func (w *Writer) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int(w.queued - w.written)
}

// bufCaps reports the capacities of the two buffers (for tests).
func (w *Writer) bufCaps() (pending, spare int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return cap(w.pending), cap(w.spare)
}
