package load

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/codec"
)

// pubLog records when each touch (publish) was sent, so a delivery can be
// timed against the publish that caused it. It has one writer: the one
// sender that publishes on a connection.
//
// Without unique URIs, deliveries are matched to publishes in order: the
// k-th notifications/resources/updated on a stream belongs to the k-th
// publish of its publisher. That holds because every stream is
// acknowledged before the first publish (but for one acknowledged late,
// after openListens stopped waiting: its timings are off) and the server
// delivers before it answers the touch. With unique URIs the URI names k.
type pubLog struct {
	sent []atomic.Int64 // ns since base; negative for warm-up publishes
	n    atomic.Int64

	// Touches that failed (an error reply, a timeout, a failed write):
	// the server may not have published them, so no stream is expected to
	// receive them. A timed-out touch may still have been published: its
	// delivery is neither foreign nor a duplicate. Failures are rare: a
	// mutex and a list are fine.
	failMu sync.Mutex
	failed []int64
	nfail  atomic.Int64
}

func newPubLog(capacity int) *pubLog { return &pubLog{sent: make([]atomic.Int64, capacity)} }

func (p *pubLog) add(t int64, measured bool) {
	k := p.n.Load()
	if k < int64(len(p.sent)) {
		if !measured {
			t = -t
		}
		p.sent[k].Store(t)
	}
	p.n.Store(k + 1)
}

// fail marks publish k failed.
func (p *pubLog) fail(k int64) {
	p.failMu.Lock()
	p.failed = append(p.failed, k)
	p.failMu.Unlock()
	p.nfail.Add(1)
}

// failedSince returns the failed publishes with an index of at least from.
func (p *pubLog) failedSince(from int64) []int64 {
	p.failMu.Lock()
	defer p.failMu.Unlock()
	var out []int64
	for _, k := range p.failed {
		if k >= from {
			out = append(out, k)
		}
	}
	return out
}

// expectedSince is how many publishes from index from on succeeded.
func (p *pubLog) expectedSince(from int64) int64 {
	n := p.n.Load() - from
	if from == 0 {
		return n - p.nfail.Load()
	}
	return n - int64(len(p.failedSince(from)))
}

// measuredSince is how many measured publishes from index from on were
// sent.
func (p *pubLog) measuredSince(from int64) (n int64) {
	for k := from; k < min(p.n.Load(), int64(len(p.sent))); k++ {
		if p.sent[k].Load() > 0 {
			n++
		}
	}
	return n
}

// latency returns the delay of delivery k received at now, and whether
// publish k is measured.
func (p *pubLog) latency(k, now int64) (int64, bool) {
	if k >= int64(len(p.sent)) {
		return 0, false
	}
	t := p.sent[k].Load()
	if t <= 0 {
		return 0, false
	}
	return now - t, true
}

// Stream states.
const (
	streamOpen = iota
	streamEnded
	streamFailed
)

// listenStream is one subscriptions/listen subscription.
type listenStream struct {
	k     int
	pub   *pubLog
	conn  *streamConn  // stdio/tcp/unix: the connection it lives on
	count atomic.Int64 // deliveries (unique URIs: distinct publishes from index from on received)
	// from is the publish index when the stream was acknowledged: only
	// publishes from there on must reach it (one acknowledged late, after
	// openListens stopped waiting, joined the run midway).
	from  atomic.Int64
	acked atomic.Bool
	state atomic.Int32
	// seen (unique URIs) marks the publishes received, indexed by k. The
	// stream's reader is its only writer; the drain reads it while the
	// reader runs, hence the atomics. It grows with the highest k received
	// (growSeen).
	seen atomic.Pointer[[]atomic.Uint64]
}

// listenErrs counts listen stream failures by kind (rare: a mutex is fine).
type listenErrs struct {
	mu sync.Mutex
	m  map[string]int64
}

func (e *listenErrs) add(kind string) {
	e.mu.Lock()
	if e.m == nil {
		e.m = map[string]int64{}
	}
	e.m[kind]++
	e.mu.Unlock()
}

func (r *run) listenFailed(s *listenStream, kind string) {
	if s.state.CompareAndSwap(streamOpen, streamFailed) {
		r.lerrs.add(kind)
	}
}

// streamEnd handles the response to a listen request: an error means the
// subscription was refused, a result that the server ended it (SUB-10).
func (r *run) streamEnd(s *listenStream, env *codec.Envelope, msg []byte) {
	if env.HasError {
		kind := errListenFailed
		if raw, ok := codec.LookupPath(msg, "error", "code"); ok {
			kind = "rpc_" + string(raw)
		}
		r.listenFailed(s, kind)
		return
	}
	if s.state.CompareAndSwap(streamOpen, streamEnded) && !r.stopping.Load() {
		r.lerrs.add(errListenEnded)
	}
}

// streamNote handles a notification that may belong to a subscription.
// For HTTP, s is the stream of the connection; on a shared connection c
// the stream is found by subscriptionId (STD-08, SUB-05).
func (r *run) streamNote(s *listenStream, env *codec.Envelope, msg []byte, now int64, c *streamConn) {
	updated := env.Method.EqualString("notifications/resources/updated")
	ack := !updated && env.Method.EqualString("notifications/subscriptions/acknowledged")
	cancelled := !updated && !ack && env.Method.EqualString("notifications/cancelled")
	if !updated && !ack && !cancelled {
		return
	}
	if s == nil {
		var raw []byte
		if cancelled {
			raw, _ = codec.LookupPath(env.Params, "requestId")
		} else {
			raw, _ = codec.LookupPath(env.Meta, "io.modelcontextprotocol/subscriptionId")
		}
		if s = r.streamOn(raw, c); s == nil {
			return
		}
	}
	switch {
	case updated:
		k := int64(-1)
		if r.seqPrefix != nil {
			var ok bool
			if k, ok = r.seqOf(s, env); !ok {
				return
			}
		} else {
			k = s.count.Add(1) - 1
		}
		if ns, ok := s.pub.latency(k, now); ok {
			if c != nil {
				c.rec.delivery(ns)
			} else {
				r.shared.record(s.k, ns)
			}
		}
	case ack:
		if !s.acked.Load() {
			s.from.Store(s.pub.n.Load()) // before acked: readers of acked read from
		}
		if !s.acked.Swap(true) {
			r.acks.Add(1)
		}
	case cancelled:
		// SUB-11: a server-sent cancel also ends the subscription.
		if s.state.CompareAndSwap(streamOpen, streamEnded) && !r.stopping.Load() {
			r.lerrs.add(errListenEnded)
		}
	}
}

// seqOf returns the publish index k a unique-URI update names, and records
// it on s: false for an update this run did not publish (counted as an
// error) or one already received on s (a duplicate).
func (r *run) seqOf(s *listenStream, env *codec.Envelope) (int64, bool) {
	raw, _ := codec.LookupPath(env.Params, "uri")
	k, ok := parseSeqURI(raw, r.seqPrefix)
	if !ok || k < 0 || k >= s.pub.n.Load() {
		r.lerrs.add(errListenForeign)
		return 0, false
	}
	w, bit := &s.growSeen(k)[k/64], uint64(1)<<(k%64)
	v := w.Load()
	if v&bit != 0 {
		r.dups.Add(1)
		return 0, false
	}
	w.Store(v | bit) // the only writer
	if k >= s.from.Load() {
		s.count.Add(1)
	}
	return k, true
}

// growSeen returns s's bitmap, grown to cover index k (k < s.pub.n) if it
// did not: it grows with the highest index received, doubling, but never
// beyond the publishes sent so far, so a stream holds one bit per publish,
// not the run's capacity. Reader side.
func (s *listenStream) growSeen(k int64) []atomic.Uint64 {
	var cur []atomic.Uint64
	if p := s.seen.Load(); p != nil {
		cur = *p
	}
	w := int(k / 64)
	if w < len(cur) {
		return cur
	}
	limit := int((s.pub.n.Load() + 63) / 64)
	seen := make([]atomic.Uint64, max(w+1, min(2*len(cur), limit)))
	for i := range cur {
		seen[i].Store(cur[i].Load())
	}
	s.seen.Store(&seen)
	return seen
}

// has reports whether s received publish k (unique URIs).
func (s *listenStream) has(k int64) bool {
	p := s.seen.Load()
	return p != nil && k/64 < int64(len(*p)) && (*p)[k/64].Load()&(uint64(1)<<(k%64)) != 0
}

// received is how many publishes that succeeded since s was acknowledged
// s received (unique URIs): the delivery of a failed touch, one the server
// published anyway, is not counted.
func (s *listenStream) received(failed []int64) int64 {
	got := s.count.Load()
	for _, k := range failed {
		if s.has(k) {
			got--
		}
	}
	return got
}

// lost is how many publishes that succeeded since s was acknowledged s did
// not receive (unique URIs): a failed touch is not expected, and its
// delivery, if the server published it anyway, is not counted either.
func (s *listenStream) lost() int64 {
	from := s.from.Load()
	return max(s.pub.expectedSince(from)-s.received(s.pub.failedSince(from)), 0)
}

// pending reports whether s still waits for a publish that succeeded
// since it was acknowledged (unique URIs; the drain, once every touch has
// its outcome).
func (s *listenStream) pending() bool {
	from := s.from.Load()
	want := s.pub.expectedSince(from)
	if s.count.Load() < want {
		return true // at most count were received: no need to look further
	}
	return s.received(s.pub.failedSince(from)) < want
}

// streamOn finds the stream whose raw id is raw on connection c. Reader
// goroutines start before the streams exist, so the table is published
// through an atomic pointer once complete.
func (r *run) streamOn(raw []byte, c *streamConn) *listenStream {
	k, ok := listenIndex(raw)
	tab := r.streamTab.Load()
	if !ok || tab == nil || k >= len(*tab) || (*tab)[k].conn != c {
		return nil
	}
	return (*tab)[k]
}

// cancelListen is notifications/cancelled for listen stream k (SUB-09).
func cancelListen(k int) []byte {
	b := append([]byte(nil), cancelledPrefix...)
	b = append(b, `"listen-`...)
	b = strconv.AppendInt(b, int64(k), 10)
	b = append(b, '"')
	return append(b, cancelledSuffix...)
}
