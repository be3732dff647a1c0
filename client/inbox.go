package client

import (
	"context"
	"io"
	"sync"
)

// Inbox is the receiving side of one Exchange: the messages the server
// sent for the request, held between the goroutine that reads them off
// the connection and the one that calls Next, and how the exchange ended.
// LineTransport and the 2024-11-05 HTTP+SSE exchanges of client/streamhttp
// queue in one; a Streamable HTTP exchange reads its reply on the Next
// goroutine, so it queues nothing and keeps only an Ending.
//
// A Transport written outside this module can build its Exchange on one:
// its reading side calls Push for each notification of the request,
// Final for the response and End when the connection is lost; its Next
// is Inbox.Next; its Close calls Cancel and, when that reports the
// request still pending, cancels it on the wire.
//
// The rules:
//
//   - Next returns the messages in the order they were pushed, the final
//     one last, then io.EOF on every later call.
//   - The first of Final, End, a failing Push and Cancel ends the
//     exchange; messages that arrive after it are ignored (a reply after
//     a cancellation, CAN-05).
//   - After End(err), Next still returns what was queued, then err.
//   - Max bounds the unread messages. When Max are unread, Push drops the
//     new message (OverflowDrop) or ends the exchange with
//     ErrSlowConsumer and drops the queue (OverflowFail). Final is accepted
//     however many are unread: nothing follows it, so at most Max+1
//     messages are held.
//   - Cancel drops what is queued. Next then returns how the exchange had
//     ended (io.EOF after the final message), or the reason given to
//     Cancel when it had not.
//   - Next looks at its context before the queue: a server that never
//     stops sending cannot keep a call past its deadline (TMO-01). The end
//     of the context makes Next return ctx.Err() and nothing else; a
//     transport for which it means cancellation calls Cancel itself.
//
// Concurrency: every method may be called from any goroutine at any time,
// except that Next is called from one goroutine at a time (as
// Exchange.Next). Only Next waits. Set Max and Overflow before the Inbox
// is shared and do not change them; an Inbox must not be copied once
// used. The zero Inbox is open, with the default bound.
type Inbox struct {
	// Max bounds the unread messages (the final one aside). It follows
	// the limit rule (see Limits): 0 is DefaultMaxQueued; negative is no
	// bound, which a server that floods can exploit.
	Max int
	// Overflow is what Push does when Max messages are unread.
	Overflow Overflow

	Ending               // how the exchange ended; its mutex guards the queue too
	q      [][]byte      // unread messages, from head on
	head   int           // index of the next message in q
	first  [1][]byte     // q's backing array while one slot is enough (no allocation)
	wake   chan struct{} // one token; made by the first Next that waits
}

// Ending is how one exchange ends: open until the first of End and Cancel,
// which decides it for good. Inbox is an Ending with a queue; an Exchange
// that queues nothing (Streamable HTTP reads its reply on the Next
// goroutine) keeps only an Ending, to settle the race between its response
// arriving and a Close, a context's end or the transport's Close. Every
// method may be called from any goroutine; the zero Ending is open; an
// Ending must not be copied once used.
type Ending struct {
	mu  sync.Mutex
	end error // nil while open; io.EOF once complete
}

// End ends the exchange with err (nil: io.EOF, complete) and reports
// whether this call ended it (false: it had already ended or been
// cancelled).
func (e *Ending) End(err error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.endLocked(err)
}

// Cancel abandons the exchange: it reports whether it was still open, that
// is, whether the request is still pending and should be cancelled on the
// wire; only the first call can report so. Err returns reason from then on
// (ErrClosed when reason is nil), unless the exchange had ended before.
func (e *Ending) Cancel(reason error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cancelLocked(reason)
}

// Err reports how the exchange ended: nil while it is open, io.EOF once it
// is complete, else the error given to End or Cancel (or ErrSlowConsumer
// for an Inbox that overflowed).
func (e *Ending) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.end
}

// endLocked and cancelLocked are End and Cancel with e.mu held: the one
// place the end rules are written, for Ending and Inbox alike.
func (e *Ending) endLocked(err error) bool {
	if e.end != nil {
		return false
	}
	if err == nil {
		err = io.EOF
	}
	e.end = err
	return true
}

func (e *Ending) cancelLocked(reason error) bool {
	if e.end != nil {
		return false
	}
	if reason == nil {
		reason = ErrClosed
	}
	e.end = reason
	return true
}

// Overflow is what Push does with a message that finds Max unread.
type Overflow uint8

const (
	// OverflowFail ends the exchange with ErrSlowConsumer and frees what
	// was queued: for a stream whose every notification matters (a listen
	// stream), where silently losing one would be worse than ending it,
	// and a consumer that far behind is told at once rather than fed the
	// backlog first.
	OverflowFail Overflow = iota
	// OverflowDrop drops the new message and goes on: for a call, whose
	// notifications (progress, log messages) are advisory and must not
	// cost it its response.
	OverflowDrop
)

// PushResult is what Push did with a message.
type PushResult uint8

const (
	PushQueued  PushResult = iota // queued for Next
	PushIgnored                   // the exchange had already ended or been cancelled
	PushDropped                   // Max were unread (OverflowDrop): the transport may count it
	// PushFailed: Max were unread (OverflowFail); the exchange has ended
	// with ErrSlowConsumer and the transport should cancel the request on
	// the wire, as Close would.
	PushFailed
)

// Push queues msg, a message of the exchange that is not its last (a
// notification). The Inbox keeps msg: the caller must not reuse it.
func (b *Inbox) Push(msg []byte) PushResult {
	b.mu.Lock()
	if b.end != nil {
		b.mu.Unlock()
		return PushIgnored
	}
	if len(b.q)-b.head >= limit(b.Max, DefaultMaxQueued) {
		if b.Overflow == OverflowDrop {
			b.mu.Unlock()
			return PushDropped
		}
		b.end = ErrSlowConsumer
		b.q, b.head = nil, 0
		b.unlockWake()
		return PushFailed
	}
	b.add(msg)
	b.unlockWake()
	return PushQueued
}

// Final queues msg as the exchange's last message (the response, or
// whatever else ends it): Next returns it after every earlier one and
// then io.EOF. It reports false when the exchange had already ended (msg
// is then dropped). The Inbox keeps msg.
func (b *Inbox) Final(msg []byte) bool {
	b.mu.Lock()
	if b.end != nil {
		b.mu.Unlock()
		return false
	}
	b.add(msg)
	b.end = io.EOF
	b.unlockWake()
	return true
}

// End ends the exchange with err without a final message: Next returns
// what is queued, then err (ErrDropped for a connection lost before the
// response, for example). A nil err is io.EOF: the exchange is complete.
// It reports whether this call ended it (false: it had already ended).
func (b *Inbox) End(err error) bool {
	b.mu.Lock()
	ended := b.endLocked(err)
	b.unlockWake()
	return ended
}

// Cancel abandons the exchange: what is queued is dropped, later messages
// are ignored and a Next waiting in another goroutine returns. It reports
// whether the exchange was still open, that is, whether the request is
// still pending and should be cancelled on the wire; only the first call
// can report so. Next returns reason from then on, or ErrClosed when
// reason is nil, unless the exchange had ended before.
func (b *Inbox) Cancel(reason error) bool {
	b.mu.Lock()
	open := b.cancelLocked(reason)
	b.q, b.head = nil, 0
	b.unlockWake()
	return open
}

// Next returns the next message, waiting for one as long as ctx allows,
// or why there is none: io.EOF after the final message, the error the
// exchange ended with, ctx.Err(). The slice is the caller's.
func (b *Inbox) Next(ctx context.Context) ([]byte, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b.mu.Lock()
		if b.head < len(b.q) {
			m := b.q[b.head]
			b.q[b.head] = nil
			b.head++
			if b.head == len(b.q) {
				// Drained: the next message reuses the backing array.
				b.q, b.head = b.q[:0], 0
			}
			b.mu.Unlock()
			return m, nil
		}
		if err := b.end; err != nil {
			b.mu.Unlock()
			return nil, err
		}
		// The channel is made by the first wait only: a reply already
		// queued when Next is called costs no allocation.
		if b.wake == nil {
			b.wake = make(chan struct{}, 1)
		}
		w := b.wake
		b.mu.Unlock()
		select {
		case <-w:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// add appends msg to the queue (b.mu held).
func (b *Inbox) add(msg []byte) {
	if b.q == nil {
		b.q = b.first[:0]
	}
	b.q = append(b.q, msg)
}

// unlockWake releases b.mu and wakes a Next that waits. The wake holds one
// token: a push while Next is not waiting leaves it, and the Next that
// takes it finds the queue or the end changed (or, at worst, loops once).
func (b *Inbox) unlockWake() {
	w := b.wake
	b.mu.Unlock()
	if w != nil {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}
