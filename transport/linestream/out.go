package linestream

import (
	"bytes"
	"sync"

	"github.com/mcpwire/mcpwire/framing"
)

// minOut is the first output buffer a connection takes from the pool.
const minOut = 4 << 10

// outQueue holds a connection's frames until the driver writes them. It is
// safe for concurrent use: the input side, the engine's workers, progress
// timers and listen-stream publishers append; one flusher at a time writes.
//
// Batching: while the input side is feeding (held) nobody is woken, since
// the input side flushes when it is done; otherwise the first frame that
// lands in an empty, unflushed queue wakes the driver's output side once,
// and everything appended until the flusher takes the batch leaves with it.
// Buffers go back to the pool whenever the queue is empty, so an idle
// connection holds none.
type outQueue struct {
	mu       sync.Mutex
	buf      []byte // frames waiting, each ending in '\n'
	spare    []byte // the flusher's previous batch, reused
	max      int
	held     bool // the input side is feeding and will flush
	flushing bool // a flusher is running
	woken    bool // the output side was woken and has not flushed yet
	// last is the size of the last batch written (at most maxHint): the
	// next batch's buffer is taken that large at once, instead of growing
	// 4 KiB, 16 KiB, 64 KiB through copies on every batch of a busy
	// connection. It is a size, not a buffer: an idle connection still
	// holds none (and it fits in the struct's padding).
	last uint32
	err  error // sticky: the connection cannot take more output
}

// maxHint bounds the buffer a connection takes at once from the size of
// its last batch; a batch larger than that grows as before.
const maxHint = 64 << 10

// took notes the size of a batch taken for writing.
func (q *outQueue) took(n int) { q.last = uint32(min(n, maxHint)) }

// growLocked moves what waits to a pooled buffer with room for need
// bytes in all, at least twice the old size (or the last batch's); the
// callers check need > cap(q.buf) first. Called with q.mu held.
func (q *outQueue) growLocked(need int) {
	nb := append(framing.AcquireBuf(max(2*cap(q.buf), need, minOut, int(q.last))), q.buf...)
	framing.ReleaseBuf(q.buf)
	q.buf = nb
}

// appendFrame queues frame and a '\n'. It reports whether the driver's
// output side must be woken, and an error when the frame was refused: it
// contains a newline (nothing queued), the connection has failed, or the
// queue would pass max (ErrSlowConsumer: the queue fails).
func (q *outQueue) appendFrame(frame []byte) (wake bool, err error) {
	if bytes.IndexByte(frame, '\n') >= 0 {
		return false, framing.ErrNewlineInFrame
	}
	q.mu.Lock()
	if q.err != nil {
		err = q.err
		q.mu.Unlock()
		return false, err
	}
	need := len(q.buf) + len(frame) + 1
	if need > q.max {
		q.failLocked(ErrSlowConsumer)
		q.mu.Unlock()
		return false, ErrSlowConsumer
	}
	if need > cap(q.buf) {
		q.growLocked(need)
	}
	q.buf = append(q.buf, frame...)
	q.buf = append(q.buf, '\n')
	if !q.held && !q.flushing && !q.woken {
		q.woken, wake = true, true
	}
	q.mu.Unlock()
	return wake, nil
}

// put queues stage, frames the input side collected without the lock
// (Conn.ReplyInBatch), each ending in '\n', after what is queued. Only
// the input side calls it, between hold and its flush, so nobody needs
// waking. The queue takes stage's buffer, or copies it and gives it back
// to the pool: the caller keeps none. It reports the queue's error, if
// any: stage was dropped.
func (q *outQueue) put(stage []byte) error {
	q.mu.Lock()
	drop := q.putLocked(stage)
	err := q.err
	q.mu.Unlock()
	releaseBuf(drop)
	return err
}

// putLocked is put under q.mu (flush and tryFlush queue the input side's
// stage in the critical section they start with). It returns the buffer
// to give back to the pool once the lock is released: stage when it was
// copied or dropped, or the empty buffer it replaced; nil for none.
func (q *outQueue) putLocked(stage []byte) (drop []byte) {
	switch need := len(q.buf) + len(stage); {
	case q.err != nil:
	case need > q.max:
		q.failLocked(ErrSlowConsumer)
	case len(q.buf) == 0:
		// The common case: nothing else waits, the stage becomes the
		// batch (no copy).
		q.buf, drop = stage, q.buf
		return drop
	default:
		if need > cap(q.buf) {
			q.growLocked(need)
		}
		q.buf = append(q.buf, stage...)
	}
	return stage
}

// releaseBuf is framing.ReleaseBuf without the call for a buffer that is
// not there (nil: the usual empty queue's).
func releaseBuf(b []byte) {
	if cap(b) != 0 {
		framing.ReleaseBuf(b)
	}
}

// hold marks the input side as feeding: frames queued meanwhile wait for
// its flush instead of waking the output side.
func (q *outQueue) hold() {
	q.mu.Lock()
	q.held = true
	q.mu.Unlock()
}

// release ends a hold without writing; it reports whether the output side
// must be woken for what is queued.
func (q *outQueue) release() (wake bool) {
	q.mu.Lock()
	q.held = false
	if len(q.buf) > 0 && !q.flushing && !q.woken {
		q.woken, wake = true, true
	}
	q.mu.Unlock()
	return wake
}

// tryFlush ends a hold, queues stage as put does (nil for none), and
// writes what is queued with try, which never blocks and may take only
// part of it. What try does not take stays at the head of the queue, and
// tryFlush reports that the output side must be woken to write it. Its
// error is the queue's, put's included.
func (q *outQueue) tryFlush(stage []byte, try func([]byte) (int, error)) (wake bool, err error) {
	q.mu.Lock()
	q.held = false
	var drop []byte
	if stage != nil {
		drop = q.putLocked(stage)
	}
	for !q.flushing && len(q.buf) > 0 && q.err == nil {
		q.flushing = true
		batch := q.buf
		q.took(len(batch))
		q.buf = q.spare[:0]
		q.spare = nil
		q.mu.Unlock()
		n, werr := try(batch)
		q.mu.Lock()
		q.flushing = false
		if werr != nil {
			q.spare = batch[:0]
			q.failLocked(werr)
			break
		}
		if n < len(batch) {
			// The peer is full: the rest goes first, before what was
			// queued meanwhile, and the output side writes it.
			rest := batch[n:]
			nb := append(framing.AcquireBuf(max(len(rest)+len(q.buf), minOut)), rest...)
			nb = append(nb, q.buf...)
			framing.ReleaseBuf(q.buf)
			q.buf = nb
			q.spare = batch[:0]
			wake = !q.woken
			q.woken = true
			break
		}
		q.spare = batch[:0]
	}
	if len(q.buf) == 0 && !q.flushing {
		releaseBuf(q.buf)
		releaseBuf(q.spare)
		q.buf, q.spare = nil, nil
	}
	err = q.err
	q.mu.Unlock()
	releaseBuf(drop)
	return wake, err
}

// flush ends a hold (if any), queues stage as put does (nil for none: the
// output side's call), and writes everything queued with write, looping
// while more frames arrive, unless another flusher is running (it then
// takes them). It returns the queue's error, if any, put's included.
func (q *outQueue) flush(stage []byte, write func([]byte) (int, error)) error {
	q.mu.Lock()
	q.held = false
	var drop []byte
	if stage != nil {
		drop = q.putLocked(stage)
	}
	if q.flushing {
		// The running flusher (the input side's tryFlush) takes what is
		// queued, and wakes the output side again if the peer leaves
		// some: this wake is spent. Left set, it would keep every later
		// frame from waking anyone.
		q.woken = false
		err := q.err
		q.mu.Unlock()
		releaseBuf(drop)
		return err
	}
	q.flushing = true
	for len(q.buf) > 0 && q.err == nil {
		batch := q.buf
		q.took(len(batch))
		q.buf = q.spare[:0]
		q.spare = nil
		q.mu.Unlock()
		n, err := write(batch)
		if err == nil && n != len(batch) {
			err = errShortWrite
		}
		q.mu.Lock()
		q.spare = batch[:0]
		if err != nil {
			q.failLocked(err)
		}
	}
	q.flushing, q.woken = false, false
	if len(q.buf) == 0 {
		// Idle: give the buffers back (an idle connection holds none).
		releaseBuf(q.buf)
		releaseBuf(q.spare)
		q.buf, q.spare = nil, nil
	}
	err := q.err
	q.mu.Unlock()
	releaseBuf(drop)
	return err
}

// fail makes the queue refuse further frames with err and drops what is
// queued; the first error sticks.
func (q *outQueue) fail(err error) {
	q.mu.Lock()
	q.failLocked(err)
	q.mu.Unlock()
}

func (q *outQueue) failLocked(err error) {
	if q.err != nil {
		return
	}
	q.err = err
	// A running flusher owns its batch (spare is nil then); what waits in
	// buf is dropped.
	framing.ReleaseBuf(q.buf)
	framing.ReleaseBuf(q.spare)
	q.buf, q.spare = nil, nil
}

// pending returns the number of bytes queued and not yet taken by a
// flusher.
func (q *outQueue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.buf)
}

// error returns the queue's sticky error.
func (q *outQueue) error() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}
