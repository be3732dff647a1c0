package framing

import (
	"io"
	"testing"
)

func BenchmarkWriteFrame(b *testing.B) {
	w := NewWriter(io.Discard, WriterConfig{})
	defer w.Close()
	b.SetBytes(int64(len(benchLine) + 1))
	b.ReportAllocs()
	for range b.N {
		if err := w.WriteFrame(benchLine); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFrameParallel(b *testing.B) {
	w := NewWriter(io.Discard, WriterConfig{})
	defer w.Close()
	b.SetBytes(int64(len(benchLine) + 1))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := w.WriteFrame(benchLine); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteFrameParts is the fan-out shape: one notification body sent
// with a per-recipient id spliced in.
func BenchmarkWriteFrameParts(b *testing.B) {
	w := NewWriter(io.Discard, WriterConfig{})
	defer w.Close()
	prefix := []byte(`{"jsonrpc":"2.0","id":`)
	id := []byte(`12345`)
	suffix := benchLine[len(prefix)+len(id):]
	b.SetBytes(int64(len(prefix) + len(id) + len(suffix) + 1))
	b.ReportAllocs()
	for range b.N {
		if err := w.WriteFrameParts(prefix, id, suffix); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		ReleaseBuf(AcquireBuf(class64K))
	}
}
