package load

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// The timeline: per-second samples of the measured window (responses/s,
// errors/s, p50 and p99), for the HTML report. It is recorded only when
// Config.Timeline is set; otherwise a recorder pays one nil check.
//
// Each recorder gets a ring of tlRing one-second slots of a small
// log-linear latency histogram with atomic counts (its owner adds, the
// sweeper takes). Every 250 ms the sweeper empties the slots of each second
// that ended tlLag seconds ago while the run still went on into a sample,
// so memory stays bounded however long the run. The final sweep after the
// run takes the rest: the window's last full second, its partial last one
// up to the last completion (drain included), folded into the second
// before it when shorter than tlMinPart. A completion the sweeper missed
// (its owner was descheduled for over tlLag seconds between measuring and
// recording it) lands tlRing seconds later.
const (
	tlRing    = 8
	tlLag     = 2
	tlLinear  = 64                     // values below this many µs have a bucket each
	tlSub     = 32                     // buckets per power of two above (≤ 1.6% from the value)
	tlBuckets = tlLinear + 20*tlSub    // histMax (60 s) < 2^26 µs
	tlMinPart = int64(time.Second) / 4 // a final partial second shorter than this is not drawn
)

// tlIndex maps a latency in µs (1..histMax) to its bucket.
func tlIndex(us int64) int {
	if us < tlLinear {
		return int(max(us, 0))
	}
	e := bits.Len64(uint64(us)) - 6 // us>>e is in [32, 64)
	return tlLinear + (e-1)*tlSub + int(us>>e) - tlSub
}

// tlValue is the middle of bucket i in µs.
func tlValue(i int) int64 {
	if i < tlLinear {
		return int64(i)
	}
	e := (i-tlLinear)/tlSub + 1
	lo := int64((i-tlLinear)%tlSub+tlSub) << e
	return lo + (int64(1)<<e-1)/2
}

type tlSlot struct {
	counts [tlBuckets]atomic.Uint32 // answered requests by latency
	lost   atomic.Uint32            // measured requests without an answer (timeout, io…)
	errs   atomic.Uint32            // failed requests, answered or not
}

// tlSlots is one recorder's ring.
type tlSlots struct {
	mStart int64
	slots  [tlRing]tlSlot
}

// add records one measured completion at done (ns since base).
func (t *tlSlots) add(done, latNs int64, out int) {
	sec := max(done-t.mStart, 0) / int64(time.Second)
	s := &t.slots[sec%tlRing]
	switch out {
	case outOK, outHTTP, outRPC, outToolError:
		s.counts[tlIndex(min(max(latNs/1000, histMin), histMax))].Add(1)
	default:
		s.lost.Add(1)
	}
	if out != outOK {
		s.errs.Add(1)
	}
}

// Sample is one second of the measured window.
type Sample struct {
	At        float64 // seconds from the start of the measurement to the end of this sample
	Responses int64   // completions (answered or not) in the sample
	Errors    int64   // of which failed
	PerSecond float64 // Responses / the sample's length
	P50, P99  int64   // µs, answered requests only (0: none)
}

// timeline sweeps the recorders' rings into samples.
type timeline struct {
	mStart  int64
	recs    []*tlSlots
	next    int64 // the next second to sweep
	samples []Sample
	merged  [tlBuckets]int64
	stop    chan struct{}
	done    chan struct{}
}

// startTimeline attaches a ring to every recorder and starts the sweeper;
// the returned function stops it, sweeps what is left and returns the
// samples. Without Config.Timeline it does nothing and returns nil.
func (r *run) startTimeline() func() []Sample {
	if !r.cfg.Timeline {
		return func() []Sample { return nil }
	}
	tl := &timeline{mStart: r.sched.mStart, stop: make(chan struct{}), done: make(chan struct{})}
	for _, rec := range r.recorders() {
		s := &tlSlots{mStart: tl.mStart}
		tl.recs = append(tl.recs, s)
		rec.tl.Store(s)
	}
	sc := r.sched
	sec := int64(time.Second)
	go func() {
		defer close(tl.done)
		tk := time.NewTicker(250 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-tl.stop:
				return
			case <-tk.C:
			}
			// Only seconds the run was busy for from start to end: one
			// that ended tlLag ago while the run still goes, never the
			// window's last one. The rest (the last full second, the
			// partial one, the drain) is the final sweep's.
			for {
				end := tl.mStart + (tl.next+1)*sec
				if end+tlLag*sec > r.now() || sc.end > 0 && end > sc.end-sec || sc.stopped() || sc.limitHit.Load() {
					break
				}
				tl.sweep(sec)
			}
		}
	}()
	return func() []Sample {
		close(tl.stop)
		<-tl.done
		last := int64(-1)
		for _, rec := range r.recorders() {
			last = max(last, rec.lastDone)
		}
		if last < tl.mStart {
			return tl.samples // nothing measured
		}
		lastK := (last - tl.mStart) / sec
		w := last - (tl.mStart + lastK*sec) // the last second's length
		fold := w < tlMinPart && lastK > tl.next
		for tl.next <= lastK {
			switch k := tl.next; {
			case fold && k == lastK-1:
				tl.move(lastK, k) // a sliver at the end joins the second before it
				tl.sweep(sec + w)
				tl.next++
			case k == lastK:
				tl.sweep(max(w, 1))
			default:
				tl.sweep(sec)
			}
		}
		return tl.samples
	}
}

// move adds second from's counts to second to's, in every ring.
func (tl *timeline) move(from, to int64) {
	for _, rs := range tl.recs {
		a, b := &rs.slots[from%tlRing], &rs.slots[to%tlRing]
		for i := range a.counts {
			if c := a.counts[i].Swap(0); c != 0 {
				b.counts[i].Add(c)
			}
		}
		b.lost.Add(a.lost.Swap(0))
		b.errs.Add(a.errs.Swap(0))
	}
}

// sweep takes second tl.next out of every ring into a sample. width is
// the sample's length in ns: 1 s; for the last one, up to the last
// completion (drained requests included).
func (tl *timeline) sweep(width int64) {
	k := tl.next
	tl.next++
	var answered, lost, errs int64
	clear(tl.merged[:])
	for _, rs := range tl.recs {
		s := &rs.slots[k%tlRing]
		for i := range s.counts {
			if c := s.counts[i].Swap(0); c != 0 {
				tl.merged[i] += int64(c)
				answered += int64(c)
			}
		}
		lost += int64(s.lost.Swap(0))
		errs += int64(s.errs.Swap(0))
	}
	smp := Sample{
		At:        float64(k*int64(time.Second)+width) / 1e9,
		Responses: answered + lost,
		Errors:    errs,
		PerSecond: float64(answered+lost) / (float64(width) / 1e9),
	}
	if answered > 0 {
		smp.P50 = tl.quantile(answered, 0.50)
		smp.P99 = tl.quantile(answered, 0.99)
	}
	tl.samples = append(tl.samples, smp)
}

// quantile is the value at q of the merged buckets (total n > 0).
func (tl *timeline) quantile(n int64, q float64) int64 {
	want := max(int64(q*float64(n)+0.5), 1)
	var seen int64
	for i, c := range tl.merged {
		seen += c
		if seen >= want {
			return tlValue(i)
		}
	}
	return tlValue(tlBuckets - 1)
}
