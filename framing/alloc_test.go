//go:build !race

package framing

import (
	"io"
	"testing"
)

// The hot paths allocate nothing once warm. (Not run under -race: the race
// runtime and sync.Pool's random drops there change the numbers.)
func TestZeroAllocs(t *testing.T) {
	block := linesBlock(benchLine, 1<<20)

	r := NewReader(&repeatReader{block: block}, ReaderConfig{})
	defer r.Release()
	r.Next() // acquire the read buffer
	readerAllocs := testing.AllocsPerRun(10000, func() {
		if f, err := r.Next(); err != nil || len(f) != len(benchLine) {
			t.Fatalf("Reader.Next = %d bytes, %v", len(f), err)
		}
	})

	d := NewDecoder(ReaderConfig{})
	defer d.Release()
	off := 0
	decoderAllocs := testing.AllocsPerRun(10000, func() {
		f, err := d.Next()
		for f == nil && err == nil {
			chunk := block[off:min(off+5000, len(block))] // lines straddle chunks
			d.Feed(chunk)
			off = (off + len(chunk)) % len(block)
			f, err = d.Next()
		}
		if err != nil || len(f) != len(benchLine) {
			t.Fatalf("Decoder.Next = %d bytes, %v", len(f), err)
		}
	})

	w := NewWriter(io.Discard, WriterConfig{})
	defer w.Close()
	w.WriteFrame(benchLine) // acquire the buffers
	writeAllocs := testing.AllocsPerRun(10000, func() {
		if err := w.WriteFrame(benchLine); err != nil {
			t.Fatal(err)
		}
	})
	prefix, id, suffix := benchLine[:20], []byte("42"), benchLine[20:]
	partsAllocs := testing.AllocsPerRun(10000, func() {
		if err := w.WriteFrameParts(prefix, id, suffix); err != nil {
			t.Fatal(err)
		}
	})
	flushAllocs := testing.AllocsPerRun(1000, func() {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	})

	ReleaseBuf(AcquireBuf(class16K))
	poolAllocs := testing.AllocsPerRun(10000, func() {
		ReleaseBuf(AcquireBuf(class16K))
	})

	for name, got := range map[string]float64{
		"Reader.Next":            readerAllocs,
		"Decoder.Feed+Next":      decoderAllocs,
		"Writer.WriteFrame":      writeAllocs,
		"Writer.WriteFrameParts": partsAllocs,
		"Writer.Flush":           flushAllocs,
		"AcquireBuf+ReleaseBuf":  poolAllocs,
	} {
		if got != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, got)
		}
	}
}

// TestSplitLineAllocs: a line split across reads costs no allocation once
// the scratch buffer exists (it is reused, not regrown).
func TestSplitLineAllocs(t *testing.T) {
	d := NewDecoder(ReaderConfig{})
	defer d.Release()
	half := len(benchLine) / 2
	a := benchLine[:half]
	b := append(append([]byte(nil), benchLine[half:]...), '\n')
	run := func() {
		d.Feed(a)
		if f, err := d.Next(); f != nil || err != nil {
			t.Fatalf("Next = %q, %v", f, err)
		}
		d.Feed(b)
		if f, err := d.Next(); err != nil || len(f) != len(benchLine) {
			t.Fatalf("Next = %d bytes, %v", len(f), err)
		}
	}
	run()
	if got := testing.AllocsPerRun(1000, run); got != 0 {
		t.Errorf("%v allocs per split line, want 0", got)
	}
}
