package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// Batch is one read's worth of requests on a transport that handles many
// messages from one read on one goroutine (the line transports): the
// requests of the batch that run inline to their end on that goroutine —
// Inline tools and cheap methods, and those answered by validation — share
// what a request otherwise pays alone:
//
//   - one clock reading at the start (the arrival, as Scope.Now gives
//     BeginBorrowedAt) and one at End, where their request-duration
//     histograms stop: the batch's answers leave together after End, so a
//     request's recorded duration is from the read to the end of the
//     batch, the latency its client sees;
//   - one atomic add to Stats.Requests, at End;
//   - one registration for Server.Shutdown and Scope.Shutdown instead of
//     one per request: the batch is in flight (Shutdown waits for it, it
//     counts as one request in Server.Load) from its first admitted
//     request to End, and once the engine or the scope is closing no new
//     batch and no further request of a listed batch is admitted: every
//     request begun after that is refused, as before. A request that is
//     running when Shutdown's grace period ends is still cancelled.
//
// A request of the batch that leaves the goroutine (a worker runs it, a
// listen stream outlives its handler) leaves the batch at once: it is
// registered and recorded on its own, with the batch's start as its
// arrival. Get one with Scope.StartBatch, prepare requests with
// Batch.Prepare (or Scope.Prepare), begin them with Scope.BeginInBatch,
// and call End on the same goroutine after the last of them has been
// started; a Batch is recycled by End, with the Call of its last request
// run to its end on the batch's goroutine, for its next use.
type Batch struct {
	sc *Scope
	at Stamp
	// cur is the Call of the batch's last admitted request, for
	// tracker.refs (batchRef): kept across the batch's requests on it (the
	// spare), written on the batch's goroutine only, and cleared when the
	// Call leaves the batch (forget). Whether a request of it runs is its
	// admission mark (Call.admitted) against its generation.
	cur atomic.Pointer[Call]
	rep BatchReplier // SetReplier: where the answers given on the batch's goroutine go
	// stage is where the transport keeps those answers (SetStage), or nil.
	stage *[]byte
	// mark is the batch's entry in the tracker (a Call used as a list
	// node only: it serves no request), listed from the first admitted
	// request to End.
	mark     *Call
	listed   bool
	refused  bool   // the tracker refused the batch: its requests are refused
	recorded bool   // ends were counted in n
	requests uint64 // admitted, for Stats.Requests at End
	// n counts the requests that ended in the batch, by method slot; End
	// reads it as nMethodSlots/2 words (after a uint64: aligned).
	n [nMethodSlots]uint32
	// The tool the batch's last tools/call named, and the registry
	// snapshot it was found in: the calls of one read, and of the reads
	// that follow (End keeps them: the pool mostly gives a goroutine back
	// the Batch it put), often name the same tool, and a string comparison
	// is cheaper than the map lookup. A registry change publishes a new
	// snapshot, and another server's snapshot is another pointer (the
	// entry keeps it alive), so a stale entry is never used.
	toolIn *resultCache
	tool   *Tool
	// toolKey is tool's name as a wordKey (the zero key for a name that
	// is not 4 to 16 bytes long: then the names are compared as strings).
	toolKey wordKey
	// spare is the Call of a request that ended here, kept for the next
	// Prepare instead of a round trip through the pool; End keeps it
	// (unbound) for the next StartBatch that takes b from the pool.
	spare *Call
	// recovers: the transport recovers panics on the batch's goroutine
	// and hands them to Recover (SetRecovers), so an inline request's
	// handler runs without a deferred recover of its own; inHandler: the
	// handler of the batch's running request (cur) runs.
	recovers, inHandler bool
	// The parent context and Replier of the batch's requests begun with
	// BeginBound (SetParent), and whether the parent's Done is not nil.
	parent context.Context
	prep   Replier
	watch  bool
	// doneData: the transport's Done has nothing to do for a request
	// without transport data (SetDoneNeedsData).
	doneData bool
	// memo is the transport's peek memo (PeekMemo), kept with the batch
	// through the pool.
	memo *codec.PeekMemo
}

// End reads Batch.n in words of two counts: nMethodSlots is even.
var _ = [1]struct{}{}[nMethodSlots%2]

var batchPool = sync.Pool{New: func() any {
	b := &Batch{mark: &Call{shard: nextShard()}}
	b.mark.markOf = b
	return b
}}

// StartBatch takes a Batch for the messages of one read and reads the
// clock once for them (no clock is read when the server records no
// durations).
func (sc *Scope) StartBatch() *Batch {
	b := batchPool.Get().(*Batch)
	b.sc, b.at = sc, sc.Now()
	return b
}

// PeekMemo is a memo for the peeks of b's messages (codec.PeekConfig's
// Memo), kept with b, through the pool, for the reads that take b after
// this one: a transport that peeks a read's messages with it needs no
// memo of its own and no pool of them. What a memo holds is checked byte
// for byte before it is used, so one a read of another connection left is
// as good as this connection's own. Use it on b's goroutine, until End.
func (b *Batch) PeekMemo() *codec.PeekMemo {
	if b.memo == nil {
		b.memo = new(codec.PeekMemo)
	}
	return b.memo
}

// BatchReplier is implemented by a transport that collects the answers
// of a batch's requests given on the batch's own goroutine (see
// Batch.SetReplier).
type BatchReplier interface {
	// ReplyInBatch is Replier.Reply for a request of the batch that ends
	// on the batch's goroutine (an Inline run, a validation failure, a
	// refusal): it is called on that goroutine, before End, with no lock
	// of the engine held, and frame is only valid during the call. The
	// answers given elsewhere — a timeout's error, a request that left the
	// batch — still come through Replier.Reply.
	ReplyInBatch(r *Request, frame []byte) error
}

// SetReplier makes the final responses of b's requests that end on b's
// goroutine go to rep.ReplyInBatch instead of their Replier's Reply: a
// transport can then keep them without a lock until End and queue the
// read's answers at once. Call it before the first request of b begins;
// End forgets it.
func (b *Batch) SetReplier(rep BatchReplier) { b.rep = rep }

// SetStage tells b where its transport keeps the answers given on b's
// goroutine (see SetReplier): a request of b run to its end there by
// StartInline may write its response in the spare capacity of *p, all
// but its last byte, so that the frame ReplyInBatch receives starts at
// len(*p) (unsafe.SliceData(frame) == &(*p)[:len(*p)+1][len(*p)]): the
// transport takes it by extending *p over it and adding the newline,
// without a copy. From StartInline to that request's ReplyInBatch the
// transport must neither write past len(*p) nor change *p, except in
// ReplyInBatch; a frame found anywhere else is copied as before. A
// response that does not fit, and every request that does not end on b's
// goroutine, uses a buffer of its own. Call it before the first request
// of b begins; End forgets it.
func (b *Batch) SetStage(p *[]byte) { b.stage = p }

// stageOut makes the spare room of st, the batch's stage, less one byte
// for the transport's newline, c's response buffer, when that room is at
// least the capacity of c's own buffer (kept aside until release): a
// response that would fit the own buffer fits the stage, so no response
// allocates where the own buffer would not have.
func (c *Call) stageOut(st []byte) {
	if room := cap(st) - len(st) - 1; room > 0 && room >= cap(c.out) {
		out := st[len(st) : len(st) : cap(st)-1] // (its bounds check before the stores: one write barrier test for both)
		c.keep, c.out = c.out, out
		c.stagedCap = room
	}
}

// unstage gives c its own response buffer back, with what out holds
// copied into it, for a request whose response may now be written or
// sent from another goroutine (it left the batch, or it detached) while
// the transport writes its stage.
func (c *Call) unstage() {
	if cap(c.out) == c.stagedCap {
		c.out = append(c.keep[:0], c.out...)
	}
	c.keep, c.stagedCap = nil, 0
}

// SetRecovers tells b that its transport recovers a panic on b's
// goroutine — in a function it defers around the batch's requests, which
// runs before End — and, when Panicking reports true, passes what recover
// returned to Recover. An inline request of b then runs its handler
// without a deferred recover of its own (one per request); a panic of a
// handler is still counted, logged and answered -32603 (by Recover), and
// the batch may go on. Call it before the first request of b begins;
// End forgets it.
func (b *Batch) SetRecovers() { b.recovers = true }

// SetDoneNeedsData tells b that its transport's Replier.Done does nothing
// for a request that has no transport data (Request.SetTransportData): a
// request of b that ends on b's goroutine without any is then not handed to
// Done. Call it before the first request of b begins; End forgets it.
func (b *Batch) SetDoneNeedsData() { b.doneData = true }

// Panicking reports whether a handler of b is running on b's goroutine
// (SetRecovers): called while a panic unwinds there, it means the panic
// is that handler's, for Recover. Otherwise the panic is not a handler's
// and should go on (no recover).
func (b *Batch) Panicking() bool { return b.inHandler }

// Recover ends the request of b whose handler panicked with v, the value
// recover returned while Panicking reported true: the panic is counted
// (Stats.Panics) and logged, and the request is answered -32603 and
// ends, as when its handler panics with a recover of its own. It reports
// whether there was such a request (false for a nil v: then the handler
// ended the goroutine, runtime.Goexit, and its request is never answered,
// as without SetRecovers).
func (b *Batch) Recover(v any) bool {
	if !b.inHandler || v == nil {
		return false
	}
	b.inHandler = false
	c := b.cur.Load() // admit stored it; the handler runs on b's goroutine
	c.panicked(v)
	c.handleError(errPanic)
	c.complete()
	return true
}

// Prepare is Scope.Prepare for a request of b, on b's goroutine: it
// reuses the Call of a request of b that has ended, when there is one.
func (b *Batch) Prepare() *Request {
	c := b.spare
	if c == nil {
		return b.prepareNew()
	}
	b.spare = nil
	return &c.self
}

// prepareNew is Prepare without a spare, out of line so that Prepare
// inlines into the transport's loop.
//
//go:noinline
func (b *Batch) prepareNew() *Request { return b.sc.Prepare() }

// BeginInBatch is BeginPrepared for a request of b: r, from Prepare, holds
// msg's peek in its Envelope; its arrival is b's start. It binds parent
// and rep to b (SetParent) and begins r with them (BeginBound).
func (sc *Scope) BeginInBatch(r *Request, b *Batch, parent context.Context, msg []byte, rep Replier, principal any) *Request {
	b.SetParent(parent, rep)
	return sc.BeginBound(r, b, msg, principal)
}

// SetParent binds parent and rep for the requests of b begun with
// BeginBound: every request of the read has the same. parent's Done is
// asked once, here (a context's Done is the same at every call). Call it
// on b's goroutine before the first BeginBound; End forgets it.
func (b *Batch) SetParent(parent context.Context, rep Replier) {
	b.parent, b.prep, b.watch = parent, rep, parent.Done() != nil
}

// BeginBound is BeginPrepared for a request of b, with the parent context
// and Replier bound to b by SetParent: r, from Prepare, holds msg's peek
// in its Envelope; its arrival is b's start.
func (sc *Scope) BeginBound(r *Request, b *Batch, msg []byte, principal any) *Request {
	// beginCall, written out: one call and its arguments' moves less for
	// every request of a batch.
	c := r.c
	c.state = stateRunning
	c.status = 200
	// The pointers in one group (one write barrier test), before the t0
	// test's call: the arguments they take need not be kept on the stack
	// across it.
	c.srv, c.scope, c.rep, c.parent, c.principal = sc.srv, sc, b.prep, b.parent, principal
	c.msg = msg
	c.batch = b
	if c.t0 = int64(b.at); b.at == 0 {
		c.t0 = sc.srv.durStart()
	}
	if b.watch {
		c.watchParent(b.parent)
	}
	return r
}

// End records the durations of the batch's requests that ended, with one
// clock reading, and ends the batch's registration. It must be called on
// the batch's goroutine once none of its requests runs there any more.
func (b *Batch) End() {
	if b.recorded {
		if durs := b.sc.srv.durs; durs != nil && b.at != 0 {
			d := time.Duration(durNow() - int64(b.at))
			row := durs.row(b.mark.shard, b.sc.slot)
			// The counts tested two at a time, as words: a read's requests
			// name one method or a few, and half the tests of the loop
			// are for slots no request named. Each count is then read as
			// itself (no byte order).
			for i, w := range (*[nMethodSlots / 2]uint64)(unsafe.Pointer(&b.n)) {
				if w == 0 {
					continue
				}
				if n := b.n[2*i]; n != 0 {
					row[2*i].observeN(d, uint64(n))
				}
				if n := b.n[2*i+1]; n != 0 {
					row[2*i+1].observeN(d, uint64(n))
				}
			}
		}
		b.n = [nMethodSlots]uint32{}
		b.recorded = false
	}
	if b.requests != 0 {
		b.sc.srv.stats.Requests.addAt(b.mark.shard, b.requests)
		b.requests = 0
	}
	if b.listed {
		b.sc.srv.tracker.remove(b.mark)
		b.listed = false
	}
	b.mark.scope = nil
	// cur names nil or the spare here (a Call that leaves the batch is
	// forgotten), and the spare stays the batch's: kept, the next read's
	// first admit need not store it again (two atomic pointer stores
	// fewer per read). The mark is no longer listed, so no shutdown reads
	// it, and once listed again, batchRef finds the spare's last request
	// ended by its generation until admit stores its next mark.
	if cur := b.cur.Load(); cur != nil && cur != b.spare {
		b.cur.Store(nil)
	}
	if c := b.spare; c != nil {
		// The spare stays the batch's (recycleTo still names b) through
		// the pool, for the first request of the batch's next read: no
		// Put here and no Get there. Unbound, it keeps no connection,
		// server or caller alive, as a pooled Call.
		c.unbind()
	}
	b.rep, b.stage = nil, nil
	b.recovers, b.inHandler, b.doneData = false, false, false
	b.parent, b.prep, b.watch = nil, nil, false
	b.refused = false
	b.sc = nil
	batchPool.Put(b)
}

// lookupTool is Server.lookupTool through the batch's last tool.
// (check compares a name with it as two words first: toolKey.)
func (b *Batch) lookupTool(s *Server, name []byte) *Tool {
	rc := s.regs()
	if t := b.tool; t != nil && b.toolIn == rc && t.Name == string(name) {
		return t
	}
	t := rc.tool(name)
	if t != nil {
		b.toolIn, b.tool, b.toolKey = rc, t, makeWordKey(t.Name)
	}
	return t
}

// admit registers c with its batch instead of on its own; it reports
// false when the engine or c's scope is closing (also when that began
// after the batch's first request).
func (b *Batch) admit(c *Call) bool {
	first := !b.listed
	if first {
		if b.refused {
			return false
		}
		b.mark.scope = b.sc
		if !b.sc.srv.tracker.add(b.mark, 0) {
			b.refused = true
			return false
		}
		b.listed = true
	}
	// cur names the batch's Call, which usually serves the batch's next
	// request too (its spare): stored only when it changes, and kept when
	// the request ends. What tells batchRef that this request runs is its
	// admission mark, stored once per request (an atomic store of a
	// number: no write barrier, no call), and its generation, which
	// complete moves on under c.mu.
	if b.cur.Load() != c {
		b.cur.Store(c)
	}
	c.admitted.Store(c.gen + 1)
	// A shutdown that began after the batch was listed refuses the rest of
	// its read, as it refuses a request on its own (tracker.add checked the
	// first). The mark is stored before the flags are read, and closeAll
	// (closeScope) sets its flag before tracker.refs reads cur and the
	// mark: either this sees the flag, or the shutdown's cancel pass sees
	// c admitted.
	if !first && (b.sc.srv.tracker.shut.Load() || b.sc.shut.Load()) {
		// Refused: later passes skip it. One that read the mark before
		// this store cancels it, and complete still sends its refusal.
		c.admitted.Store(0)
		return false
	}
	return true
}

// leaveBatch makes c a request on its own: it is going to end on another
// goroutine. Its arrival stays the batch's start. The batch no longer
// names its Call (cur), which another goroutine recycles.
func (c *Call) leaveBatch() {
	if b := c.batch; b != nil {
		b.forget(c)
		c.batch = nil
	}
	c.recycleTo = nil // its release is on another goroutine: not b's spare
	if c.stagedCap != 0 {
		c.unstage()
	}
}

// forget clears cur when it names c, a Call leaving the batch (to a
// worker, to the pool): batchRef reads only Calls that the batch owns, so
// that a mark stored for another batch's request is never taken for one
// of b's. On b's goroutine.
func (b *Batch) forget(c *Call) {
	if b.cur.Load() == c {
		b.cur.Store(nil)
	}
	if b.spare == c {
		b.spare = nil
	}
}

// endInBatch is end's part for a request of a batch, before its Call is
// recycled: its duration is counted for End, and its Call goes back to the
// batch (release). The batch's cur still names the Call: batchRef finds
// the request ended by its generation, which complete moved on.
func (c *Call) endInBatch(b *Batch) {
	if c.t0 != 0 {
		var m uint8
		if c.method != nil {
			m = c.method.slot
		}
		b.n[m]++
		b.recorded = true
		c.t0 = 0
	}
	c.batch = nil
	c.recycleTo = b
}

// batchRef is tracker.refs' reference for the batch whose tracker entry is
// mark: its running request, if any. cur names a Call that only the batch
// uses (forget clears it when the Call leaves), and that Call runs an
// admitted request when its admission mark names its generation: complete
// moves the generation on under c.mu, and the batch's next request on the
// Call stores its mark only when admitted, after its validation — a
// request that has ended, or one that has begun and is not admitted (it is
// going to be refused or answered by validation), is never named. Seeing
// the mark orders the request's beginning (beginCall's writes without the
// lock) before what the reference's user reads under c.mu. The request may
// end meanwhile (then the reference names a generation that no longer
// runs, and using it does nothing); one that begins after the shutdown
// flag was set is refused by admit.
func batchRef(mark *Call) (RequestRef, bool) {
	b := mark.markOf
	c := b.cur.Load()
	if c == nil {
		return RequestRef{}, false
	}
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	if c.admitted.Load() != gen+1 || b.cur.Load() != c {
		// Not admitted at gen, or c left the batch meanwhile (the mark and
		// the generation may then be another batch's request's).
		return RequestRef{}, false
	}
	return RequestRef{c, gen}, true
}
