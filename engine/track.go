package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// trackShards is how many independently locked lists hold the requests in
// flight: a request takes one shard lock when it starts and once when it
// ends, and requests started on different event loops rarely share one.
const trackShards = 16

var shardSeq atomic.Uint32

// nextShard spreads new Calls over the shards; a Call keeps its shard for
// life (it is pooled).
func nextShard() uint8 { return uint8(shardSeq.Add(1) % trackShards) }

type trackShard struct {
	mu   sync.Mutex
	head *Call
	// reqs counts the requests on their own admitted in this shard, for
	// Stats.Requests (Counter.Load adds it): added under the lock add
	// takes anyway, on the line it writes anyway, instead of an atomic add
	// on a line of its own.
	reqs uint64
	// Neighbouring shards off one cache line: the array need not start on
	// a line, so a stride of 64 bytes would still let two shards' fields
	// share one; with 128, the 24 bytes used never do.
	_ [128 - 24]byte
}

// cacheLinePad separates fields written on every request from those read
// on every request: 128 bytes, as a struct is not aligned to a line and
// some processors fetch lines in pairs.
type cacheLinePad struct{ _ [128]byte }

// tracker holds every request in flight, for Server.Shutdown and
// Scope.Shutdown: whether new requests are admitted, which requests are
// left, and waiting until none is.
type tracker struct {
	shards  [trackShards]trackShard
	closing bool          // the engine is shutting down; written under every shard lock
	shut    atomic.Bool   // closing, read without the locks by a listed Batch (batch.go)
	wake    chan struct{} // cap 1: a request ended while someone waits
	waiters atomic.Int32
}

func (t *tracker) init() { t.wake = make(chan struct{}, 1) }

// add registers c; it fails once the engine or c's scope is closing. n is
// added to the shard's count of requests (Stats.Requests) when it does not:
// 1 for a request on its own, 0 for a Batch's entry (its requests are
// counted at its End).
func (t *tracker) add(c *Call, n uint64) bool {
	sh := &t.shards[c.shard]
	sh.mu.Lock()
	if t.closing || (c.scope != nil && c.scope.closing) {
		sh.mu.Unlock()
		return false
	}
	c.tprev, c.tnext = nil, sh.head
	if sh.head != nil {
		sh.head.tprev = c
	}
	sh.head = c
	sh.reqs += n
	c.tracked = true
	sh.mu.Unlock()
	return true
}

func (t *tracker) remove(c *Call) {
	if c.tracked { // inlined: a request of a Batch is not listed on its own
		t.unlist(c)
	}
}

// unlist is remove's work, out of line so that the check inlines.
func (t *tracker) unlist(c *Call) {
	sh := &t.shards[c.shard]
	sh.mu.Lock()
	if c.tprev != nil {
		c.tprev.tnext = c.tnext
	} else {
		sh.head = c.tnext
	}
	if c.tnext != nil {
		c.tnext.tprev = c.tprev
	}
	c.tprev, c.tnext = nil, nil
	c.tracked = false
	sh.mu.Unlock()
	if t.waiters.Load() > 0 {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// lockAll and unlockAll bracket a change of the admission flags.
func (t *tracker) lockAll() {
	for i := range t.shards {
		t.shards[i].mu.Lock()
	}
}

func (t *tracker) unlockAll() {
	for i := range t.shards {
		t.shards[i].mu.Unlock()
	}
}

func (t *tracker) closeAll() {
	t.lockAll()
	t.closing = true
	t.shut.Store(true)
	t.unlockAll()
}

func (t *tracker) closeScope(sc *Scope) {
	t.lockAll()
	sc.closing = true
	sc.shut.Store(true)
	t.unlockAll()
}

// admitted returns the requests on their own that add has admitted
// (Stats.Requests' share kept in the shards).
func (t *tracker) admitted() uint64 {
	var n uint64
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		n += sh.reqs
		sh.mu.Unlock()
	}
	return n
}

// count returns how many requests of sc (of any scope when sc is nil) are
// in flight. It walks the lists (only Shutdown's wait counts): add and
// unlist keep no count of their own.
func (t *tracker) count(sc *Scope) int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for c := sh.head; c != nil; c = c.tnext {
			if sc == nil || c.scope == sc {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// refs returns references to the requests of sc (all when nil) in flight,
// taken while each is certainly in the list: one that ends meanwhile is
// then left alone even if its Call already serves another request.
func (t *tracker) refs(sc *Scope) []RequestRef {
	var out []RequestRef
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		for c := sh.head; c != nil; c = c.tnext {
			if sc != nil && c.scope != sc {
				continue
			}
			if c.markOf != nil {
				// A Batch: its running request, if any (batch.go).
				if r, ok := batchRef(c); ok {
					out = append(out, r)
				}
				continue
			}
			c.mu.Lock()
			if c.state == stateRunning {
				// One that completed is still listed until its end
				// removes it, and its gen may already name its Call's
				// next request (complete): nothing of it to cancel.
				out = append(out, RequestRef{c, c.gen})
			}
			c.mu.Unlock()
		}
		sh.mu.Unlock()
	}
	return out
}

// wait returns nil once no request of sc (any when nil) is in flight, or
// cancels those left and returns ctx.Err() when ctx ends first.
func (t *tracker) wait(ctx context.Context, sc *Scope) error {
	t.waiters.Add(1)
	defer t.waiters.Add(-1)
	tick := time.NewTicker(5 * time.Millisecond) // backstop: waiters share one wake signal
	defer tick.Stop()
	for {
		if t.count(sc) == 0 {
			return nil
		}
		select {
		case <-t.wake:
		case <-tick.C:
		case <-ctx.Done():
			for _, r := range t.refs(sc) {
				r.Abort(errShutdown)
			}
			return ctx.Err()
		}
	}
}
