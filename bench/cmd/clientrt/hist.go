package main

import (
	"math/bits"
	"time"
)

// hist is a log-linear latency histogram in nanoseconds: exact below 128
// ns, then 64 buckets per power of two (at most 1/64 ≈ 1.6% wide). It is a
// fixed array, so recording allocates nothing and does not disturb the
// allocation count of the client being measured.
type hist struct {
	n      int64
	sum    int64
	counts [histBuckets]int64
}

const (
	histSub     = 64
	histBuckets = 2*histSub + 57*histSub
)

func bucketOf(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - 7 // ≥ 1: v>>shift is in [64, 128)
	return 2*histSub + (shift-1)*histSub + int(v>>uint(shift)) - histSub
}

// valueOf is the middle of bucket i.
func valueOf(i int) float64 {
	if i < 2*histSub {
		return float64(i)
	}
	i -= 2 * histSub
	shift := i/histSub + 1
	m := uint64(i%histSub + histSub)
	lo := m << uint(shift)
	return float64(lo) + float64(uint64(1)<<uint(shift))/2
}

func (h *hist) record(d time.Duration) {
	v := max(d.Nanoseconds(), 0)
	h.counts[bucketOf(uint64(v))]++
	h.n++
	h.sum += v
}

func (h *hist) merge(o *hist) {
	h.n += o.n
	h.sum += o.sum
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

func (h *hist) mean() float64 {
	if h.n == 0 {
		return nan
	}
	return float64(h.sum) / float64(h.n)
}

// quantile is the value below which a fraction q of the samples fall.
func (h *hist) quantile(q float64) float64 {
	if h.n == 0 {
		return nan
	}
	rank := int64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return valueOf(i)
		}
	}
	return nan
}
