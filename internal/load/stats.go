package load

import (
	"strconv"
	"sync"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs .. 60 s, 3 significant digits.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// recordUs records a latency given in nanoseconds, clamped to the range.
func recordUs(h *hdrhistogram.Histogram, ns int64) {
	us := ns / 1000
	if us < histMin {
		us = histMin
	} else if us > histMax {
		us = histMax
	}
	_ = h.RecordValue(us)
}

// Outcomes of a request.
const (
	outOK = iota
	outHTTP
	outRPC
	outToolError
	outTimeout
	outIO
	outConnect
	outBad
)

// Error kinds without a number.
const (
	errTimeout      = "timeout"
	errIO           = "io"
	errConnect      = "connect"
	errBad          = "bad_response"
	errToolError    = "tool_error"
	errListenFailed = "listen_failed"
	errListenEnded  = "listen_ended"
	errListenLost   = "listen_dropped"
	// errListenForeign: with unique URIs, an update naming no URI this
	// run published.
	errListenForeign = "listen_foreign_uri"
)

// errCounts counts errors by kind. Integer keyed maps keep the hot path
// free of string formatting.
type errCounts struct {
	http  map[int]int64
	rpc   map[int64]int64
	named map[string]int64
}

func (e *errCounts) init() {
	e.http, e.rpc, e.named = map[int]int64{}, map[int64]int64{}, map[string]int64{}
}

func (e *errCounts) mergeInto(out map[string]int64) {
	for k, v := range e.http {
		out["http_"+strconv.Itoa(k)] += v
	}
	for k, v := range e.rpc {
		out["rpc_"+strconv.FormatInt(k, 10)] += v
	}
	for k, v := range e.named {
		out[k] += v
	}
}

// live holds counters the progress line reads while the run goes on.
type live struct {
	done     atomic.Int64 // requests finished (warm-up included)
	errs     atomic.Int64 // of which failed
	warm     atomic.Int64 // of done, the requests not measured (warm-up)
	warmErrs atomic.Int64 // of errs, the requests not measured
	_        [32]byte     // keep recorders of different goroutines off one cache line
}

// fail counts a request that failed outside finish (timeout, lost write).
func (l *live) fail(measured bool) {
	l.done.Add(1)
	l.errs.Add(1)
	if !measured {
		l.warm.Add(1)
		l.warmErrs.Add(1)
	}
}

// recorder collects the results of one goroutine. Only its owner writes
// the plain fields; live is read by the progress line.
type recorder struct {
	lat      *hdrhistogram.Histogram
	dlat     *hdrhistogram.Histogram // deliveries (stream readers)
	requests int64                   // measured requests finished
	errs     errCounts
	progress int64 // progress notifications of measured, answered calls
	answered int64 // measured calls that got a response
	deliver  int64 // measured deliveries
	lastDone int64 // ns since base of the last measured completion
	live     live
	tl       atomic.Pointer[tlSlots] // per-second samples (report_timeline.go); nil unless Config.Timeline
}

func newRecorder() *recorder {
	r := &recorder{lat: newHist()}
	r.errs.init()
	return r
}

// finish records one request. start is its intended (open loop) or actual
// (closed loop) start, done when the final response arrived.
func (r *recorder) finish(measured bool, start, done int64, out int, code int64, progress int) {
	r.live.done.Add(1)
	if out != outOK {
		r.live.errs.Add(1)
	}
	if !measured {
		r.live.warm.Add(1)
		if out != outOK {
			r.live.warmErrs.Add(1)
		}
		return
	}
	r.record(start, done, out, code, progress)
}

// tally is what a batch of finished requests adds to the live counters.
type tally struct{ done, errs, warm, warmErrs int64 }

// finishBatched is finish for a reader that adds its live counts once per
// batch (see flushTally).
func (r *recorder) finishBatched(t *tally, measured bool, start, done int64, out int, code int64, progress int) {
	t.done++
	if out != outOK {
		t.errs++
	}
	if !measured {
		t.warm++
		if out != outOK {
			t.warmErrs++
		}
		return
	}
	r.record(start, done, out, code, progress)
}

// flushTally adds t to the live counters and clears it.
func (r *recorder) flushTally(t *tally) {
	if t.done == 0 {
		return
	}
	r.live.done.Add(t.done)
	if t.errs != 0 {
		r.live.errs.Add(t.errs)
	}
	if t.warm != 0 {
		r.live.warm.Add(t.warm)
		r.live.warmErrs.Add(t.warmErrs)
	}
	*t = tally{}
}

// record records one measured request.
func (r *recorder) record(start, done int64, out int, code int64, progress int) {
	r.requests++
	if tl := r.tl.Load(); tl != nil {
		tl.add(done, done-start, out)
	}
	if done > r.lastDone {
		r.lastDone = done
	}
	switch out {
	case outOK, outHTTP, outRPC, outToolError:
		recordUs(r.lat, done-start)
		r.answered++
		r.progress += int64(progress)
	}
	switch out {
	case outHTTP:
		r.errs.http[int(code)]++
	case outRPC:
		r.errs.rpc[code]++
	case outToolError:
		r.errs.named[errToolError]++
	case outTimeout:
		r.errs.named[errTimeout]++
	case outIO:
		r.errs.named[errIO]++
	case outConnect:
		r.errs.named[errConnect]++
	case outBad:
		r.errs.named[errBad]++
	}
}

// delivery records one measured delivery latency.
func (r *recorder) delivery(ns int64) {
	if r.dlat == nil {
		r.dlat = newHist()
	}
	r.deliver++
	recordUs(r.dlat, ns)
}

// sharedDeliveries is a set of mutex-protected delivery histograms for
// goroutines too numerous to own one each (HTTP listen streams).
type sharedDeliveries struct {
	shards []deliveryShard
}

type deliveryShard struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
	n  int64
	_  [40]byte
}

func newSharedDeliveries(n int) *sharedDeliveries {
	s := &sharedDeliveries{shards: make([]deliveryShard, n)}
	for i := range s.shards {
		s.shards[i].h = newHist()
	}
	return s
}

func (s *sharedDeliveries) record(k int, ns int64) {
	sh := &s.shards[k%len(s.shards)]
	sh.mu.Lock()
	sh.n++
	recordUs(sh.h, ns)
	sh.mu.Unlock()
}

// Latency is a latency summary in microseconds.
type Latency struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

func summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:  h.ValueAtQuantile(50),
		P90:  h.ValueAtQuantile(90),
		P99:  h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9),
		Max:  h.Max(),
		Mean: float64(int64(h.Mean()*10+0.5)) / 10,
	}
}
