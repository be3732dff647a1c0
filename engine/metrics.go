package engine

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname (nanotime)
)

// This file keeps the engine's request-duration histograms and the
// per-transport view of the requests in flight, for exporters such as
// observe/metrics. Recording costs two clock reads and two atomic adds per
// request and allocates nothing: the histograms are fixed arrays indexed by
// the method's slot (assigned once, at init) and the transport's slot
// (assigned once per Scope). Everything else is read at scrape time.
//
// Each histogram is kept in durStripes copies, a request adding to the
// copy of its Call's tracker shard, and a snapshot sums them: requests
// ending on different cores at once then write different cache lines
// instead of taking turns on one (the Calls a goroutine uses come from
// its processor's part of the pool, so the cores' requests mostly have
// different shards).

// MaxTransports bounds the distinct transport labels (NewScope names);
// names beyond it share the "other" label.
const MaxTransports = 8

// durBounds are the histogram's upper bounds (inclusive, as Prometheus's
// "le"): from 25 µs, below which no request through a socket can be
// answered, to 30 s, past which only listen streams live.
var durBounds = [...]time.Duration{
	25 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
	250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	30 * time.Second,
}

// DurationBounds returns the upper bounds of the request-duration
// histograms' buckets (the last bucket, above the last bound, is +Inf).
func DurationBounds() []time.Duration { return append([]time.Duration(nil), durBounds[:]...) }

// methodSlots: slot 0 is a request answered before its method was routed
// (unknown method, bad _meta…); the others follow the method table sorted
// by name (set by init below, after dispatch.go's init filled the table).
var methodNames []string

func init() {
	names := make([]string, 0, len(methods))
	for name := range methods {
		names = append(names, name)
	}
	sort.Strings(names)
	methodNames = append([]string{"other"}, names...)
	for i, name := range names {
		methods[name].slot = uint8(i + 1)
	}
}

// nMethodSlots is fixed at compile time: the method table of 2026-07-28
// has 10 methods; init panics if it outgrows the array.
const nMethodSlots = 16

func init() {
	if len(methodNames) > nMethodSlots {
		panic("engine: raise nMethodSlots")
	}
}

// transport labels are process-wide: slot 0 is "other" (NewScope, and any
// name beyond MaxTransports).
var transportNames = struct {
	mu    sync.Mutex
	names [MaxTransports]string
	n     int
}{names: [MaxTransports]string{"other"}, n: 1}

func transportSlot(name string) uint8 {
	t := &transportNames
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := 0; i < t.n; i++ {
		if t.names[i] == name {
			return uint8(i)
		}
	}
	if t.n == MaxTransports {
		return 0
	}
	t.names[t.n] = name
	t.n++
	return uint8(t.n - 1)
}

func transportName(slot uint8) string {
	t := &transportNames
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.names[slot]
}

// Transport returns the scope's label in the histograms and in-flight
// counts ("other" for a scope without a name).
func (sc *Scope) Transport() string { return transportName(sc.slot) }

// durHist is one histogram: counts per bucket (not cumulative) and the sum
// of the durations in nanoseconds. Updated with atomics only.
type durHist struct {
	counts [len(durBounds) + 1]atomic.Uint64
	sum    atomic.Uint64
}

func (h *durHist) observe(d time.Duration) {
	i := 0
	for i < len(durBounds) && d > durBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(uint64(d))
}

// observeN records n requests of duration d each.
func (h *durHist) observeN(d time.Duration, n uint64) {
	i := 0
	for i < len(durBounds) && d > durBounds[i] {
		i++
	}
	h.counts[i].Add(n)
	h.sum.Add(n * uint64(d))
}

// durStripes is how many copies of each histogram a Server keeps (a
// power of two, at most trackShards): ~22 KiB each.
const durStripes = 4

// durations holds a Server's histograms, one per transport × method, in
// durStripes copies that a snapshot sums.
type durations struct {
	s [durStripes]struct {
		h [MaxTransports][nMethodSlots]durHist
	}
}

// row returns the histograms of transport slot t in the copy of the
// tracker shard shard.
func (d *durations) row(shard, t uint8) *[nMethodSlots]durHist {
	return &d.s[shard&(durStripes-1)].h[t]
}

// epoch anchors the monotonic clock: time.Since on a time with a monotonic
// reading reads only the monotonic clock.
var epoch = time.Now()

// monoNow is the limiter's clock (limit.go): time.Since, which inside a
// testing/synctest bubble reads the bubble's fake time.
func monoNow() int64 { return int64(time.Since(epoch)) + 1 } // never 0: 0 means unset

// nanotime is the runtime's monotonic clock, the one time.Since reads
// (through time.runtimeNano, which adds a synctest bubble's test and a
// frame, and Since its own: about 90 instructions a reading, two
// readings a request). The runtime keeps this name and signature for
// callers outside it (runtime/time_nofake.go, go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// durEpoch is nanotime at start, less one: durNow is at least 1.
var durEpoch = nanotime() - 1

// durNow is the request-duration histograms' clock: nanoseconds since the
// process started, never 0 (0 means unset), real time even in a synctest
// bubble.
func durNow() int64 { return nanotime() - durEpoch }

// durStart is a request's start time for its histogram (0: not recorded).
func (s *Server) durStart() int64 {
	if s.durs == nil {
		return 0
	}
	return durNow()
}

// Stamp is a reading of the clock the request-duration histograms use,
// taken with Scope.Now; the zero Stamp is no reading.
type Stamp int64

// Now reads the clock of the request-duration histograms, for
// BeginBorrowedAt: a transport that handles several messages from one read
// takes one reading for all of them, instead of one per request. It
// returns 0, and reads no clock, when the server records no durations.
func (sc *Scope) Now() Stamp { return Stamp(sc.srv.durStart()) }

// observeEnd records the request's duration, from Scope.Begin (or the
// Stamp given to BeginBorrowedAt) to its end (the response handed to the
// transport, or the stream completed).
func (c *Call) observeEnd() {
	if c.t0 == 0 || c.srv.durs == nil {
		return
	}
	var m uint8
	if c.method != nil {
		m = c.method.slot
	}
	var t uint8
	if c.scope != nil {
		t = c.scope.slot
	}
	c.srv.durs.row(c.shard, t)[m].observe(time.Duration(durNow() - c.t0))
	c.t0 = 0
}

// DurationHistogram is a snapshot of one request-duration histogram.
type DurationHistogram struct {
	Method    string // the method name, or "other" for requests answered before routing
	Transport string // the scope's transport label
	// Counts has one entry per bucket of DurationBounds plus the last,
	// unbounded one; not cumulative.
	Counts []uint64
	Sum    time.Duration
	Count  uint64 // the sum of Counts
}

// RequestDurations calls fn with a snapshot of every request-duration
// histogram that has recorded at least one request. h is reused between
// calls. The counts are read one by one while requests go on, so Count and
// Sum may differ by the requests that ended meanwhile.
func (s *Server) RequestDurations(fn func(h *DurationHistogram)) {
	if s.durs == nil {
		return
	}
	h := &DurationHistogram{Counts: make([]uint64, len(durBounds)+1)}
	for t := range MaxTransports {
		for m := range nMethodSlots {
			clear(h.Counts)
			var n, sum uint64
			for k := range s.durs.s {
				d := &s.durs.s[k].h[t][m]
				for i := range d.counts {
					c := d.counts[i].Load()
					h.Counts[i] += c
					n += c
				}
				sum += d.sum.Load()
			}
			if n == 0 {
				continue
			}
			h.Count, h.Sum = n, time.Duration(sum)
			h.Method, h.Transport = methodNames[m], transportName(uint8(t))
			fn(h)
		}
	}
}

// TransportLoad is what a transport has in flight in the engine.
type TransportLoad struct {
	Transport string
	InFlight  int // requests admitted and not yet ended, listen streams included
	Listens   int // of which subscriptions/listen streams
}

// Load returns the requests in flight per transport label, read from the
// in-flight table (each shard's lock is taken briefly, as Shutdown does).
// Every transport label registered in the process is listed (with zeros
// when idle), and "other" when it has requests in flight.
func (s *Server) Load() []TransportLoad {
	var inflight, listens [MaxTransports]int
	for i := range s.tracker.shards {
		sh := &s.tracker.shards[i]
		sh.mu.Lock()
		for c := sh.head; c != nil; c = c.tnext {
			var t uint8
			if c.scope != nil {
				t = c.scope.slot
			}
			inflight[t]++
			if c.method == listenMethod {
				listens[t]++
			}
		}
		sh.mu.Unlock()
	}
	tn := &transportNames
	tn.mu.Lock()
	defer tn.mu.Unlock()
	var out []TransportLoad
	for t := 0; t < tn.n; t++ {
		if t > 0 || inflight[t] > 0 {
			out = append(out, TransportLoad{tn.names[t], inflight[t], listens[t]})
		}
	}
	return out
}
