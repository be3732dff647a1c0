package metricscmp

import (
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// atomicHist mirrors the engine's histogram (observe/metrics.go), which is
// not exported: a bucket count and a sum, each one atomic add.
type atomicHist struct {
	bounds []time.Duration
	counts []atomic.Uint64
	sum    atomic.Uint64
}

func newAtomicHist() *atomicHist {
	b := engine.DurationBounds()
	return &atomicHist{bounds: b, counts: make([]atomic.Uint64, len(b)+1)}
}

func (h *atomicHist) observe(d time.Duration) {
	i := 0
	for i < len(h.bounds) && d > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(uint64(d))
}
