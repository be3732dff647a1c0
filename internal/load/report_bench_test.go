package load

import "testing"

// BenchmarkRecordFinish is a recorder's work per measured request, without
// and with the per-second timeline of -html.
func BenchmarkRecordFinish(b *testing.B) {
	for _, tl := range []bool{false, true} {
		name := "off"
		if tl {
			name = "timeline"
		}
		b.Run(name, func(b *testing.B) {
			rec := newRecorder()
			if tl {
				rec.tl.Store(&tlSlots{})
			}
			var done int64
			b.ReportAllocs()
			for b.Loop() {
				done += 10_000
				rec.finish(true, done-(done%97_000), done, outOK, 0, 0)
			}
		})
	}
}
