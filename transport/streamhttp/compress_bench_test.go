package streamhttp

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// BenchmarkSSEGzipFlush measures what compressing an SSE stream would cost:
// each event must be flushed through the compressor to reach the client
// (C17). It reports the compressed bytes per event next to the raw size,
// which decided that SSE stays uncompressed.
func BenchmarkSSEGzipFlush(b *testing.B) {
	ev := []byte(`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-3","progress":0.25,"total":1,"message":"scanning"}}` + "\n\n")
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev)))
	for b.Loop() {
		_, _ = zw.Write(ev)
		_ = zw.Flush()
	}
	b.ReportMetric(float64(out.Len())/float64(b.N), "wire-B/event")
	b.ReportMetric(float64(len(ev)), "raw-B/event")
}

func TestPickEncoding(t *testing.T) {
	cases := map[string]string{
		"":                  "",
		"gzip":              "gzip",
		"gzip, zstd":        "zstd",
		"zstd;q=0, gzip":    "gzip",
		"gzip;q=0":          "",
		"gzip;q=0.5":        "gzip",
		"*":                 "zstd",
		"identity":          "",
		"br, deflate":       "",
		" GZIP ; q=1 , foo": "gzip",
	}
	for in, want := range cases {
		if got := pickEncoding([]byte(in)); got != want {
			t.Errorf("pickEncoding(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkGzipStreamState reports the memory one per-stream gzip writer
// holds (B/op): the price of compressing every open SSE stream.
func BenchmarkGzipStreamState(b *testing.B) {
	b.ReportAllocs()
	var sink *gzip.Writer
	for b.Loop() {
		zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		zw.Reset(&bytes.Buffer{})
		_, _ = zw.Write([]byte("data: x\n\n"))
		_ = zw.Flush()
		sink = zw
	}
	_ = sink
}
