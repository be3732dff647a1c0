package load

import (
	"testing"

	"github.com/mcpwire/mcpwire/internal/cputime"
)

// BenchmarkStreamGenerator is the pipelined stream generator's own work per
// request (1×64, the standard fixture) against an in-process fake server
// that splices the id into a fixed reply: read a batch of replies, match
// each by id, check it, record its latency, build and write the requests
// replacing them in one write. No system call, goroutine switch or process
// is involved; compare cpu-ns/req with the raw servers' CPU per request in
// `make compare` (the fake's own splice, a copy of the reply, is included).
func BenchmarkStreamGenerator(b *testing.B) {
	for name, varying := range map[string]bool{
		"echo": false,
		// Replies that differ beyond their id (the text is the id too):
		// no shape matches, every reply is parsed in full.
		"full-check": true,
	} {
		b.Run(name, func(b *testing.B) {
			g := newGenLoop(b, varying)
			for range 10 {
				g.step()
			}
			b.ReportAllocs()
			cpu0 := cputime.Process().Microseconds()
			for b.Loop() {
				g.step()
			}
			reqs := float64(b.N * g.perRun)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/reqs, "ns/req")
			// CPU time, which a machine shared with other work inflates less.
			b.ReportMetric(float64(cputime.Process().Microseconds()-cpu0)*1000/reqs, "cpu-ns/req")
			if e := g.c.rec.live.errs.Load(); e != 0 {
				b.Fatalf("%d errors", e)
			}
		})
	}
}
