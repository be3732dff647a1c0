package framing

import (
	"bytes"
	"io"
	"testing"
)

// benchLine is a 243-byte JSON-RPC-looking line (without its '\n').
var benchLine = func() []byte {
	b := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"search","arguments":{"query":"`)
	for len(b) < 243-4 {
		b = append(b, 'q')
	}
	b = append(b, `"}}}`...)
	return b
}()

// linesBlock returns about size bytes made of whole copies of line+"\n".
func linesBlock(line []byte, size int) []byte {
	var b []byte
	for len(b) < size {
		b = append(b, line...)
		b = append(b, '\n')
	}
	return b
}

// repeatReader serves block over and over, as much as each Read asks for.
type repeatReader struct {
	block []byte
	off   int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.block[r.off:])
		n += c
		r.off += c
		if r.off == len(r.block) {
			r.off = 0
		}
	}
	return n, nil
}

func BenchmarkReader(b *testing.B) {
	for _, rs := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		b.Run(sizeName(rs), func(b *testing.B) {
			src := &repeatReader{block: linesBlock(benchLine, 1<<20)}
			r := NewReader(src, ReaderConfig{ReadSize: rs})
			defer r.Release()
			b.SetBytes(int64(len(benchLine) + 1))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				f, err := r.Next()
				if err != nil || len(f) != len(benchLine) {
					b.Fatalf("Next = %d bytes, %v", len(f), err)
				}
			}
		})
	}
}

func BenchmarkDecoder(b *testing.B) {
	for _, cs := range []int{16 << 10, 64 << 10, 256 << 10} {
		b.Run(sizeName(cs), func(b *testing.B) {
			block := linesBlock(benchLine, 4<<20)
			d := NewDecoder(ReaderConfig{})
			defer d.Release()
			off := 0
			b.SetBytes(int64(len(benchLine) + 1))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				f, err := d.Next()
				for f == nil && err == nil {
					chunk := block[off:min(off+cs, len(block))]
					d.Feed(chunk)
					off += len(chunk)
					if off == len(block) {
						off = 0
					}
					f, err = d.Next()
				}
				if err != nil || len(f) != len(benchLine) {
					b.Fatalf("Next = %d bytes, %v", len(f), err)
				}
			}
		})
	}
}

// BenchmarkReaderBigLines reads 1 MiB lines through the default 64 KiB
// read buffer, so every line is assembled in scratch.
func BenchmarkReaderBigLines(b *testing.B) {
	line := bytes.Repeat([]byte("x"), 1<<20)
	src := &repeatReader{block: linesBlock(line, 1)}
	r := NewReader(src, ReaderConfig{})
	defer r.Release()
	b.SetBytes(int64(len(line) + 1))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f, err := r.Next()
		if err != nil || len(f) != len(line) {
			b.Fatalf("Next = %d bytes, %v", len(f), err)
		}
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

var _ io.Reader = (*repeatReader)(nil)

// BenchmarkDecoderTakeLine: the line transports' fast path, Rest and then
// TakeLine at the '\n' their parser found (codec.PeekLine; here the
// line's length stands in for it), over chunks of 256 whole lines.
func BenchmarkDecoderTakeLine(b *testing.B) {
	chunk := linesBlock(benchLine, 256*(len(benchLine)+1))
	d := NewDecoder(ReaderConfig{})
	defer d.Release()
	b.SetBytes(int64(len(benchLine) + 1))
	b.ReportAllocs()
	for b.Loop() {
		r := d.Rest()
		if len(r) == 0 {
			if f, err := d.Next(); f != nil || err != nil {
				b.Fatalf("Next = %q, %v", f, err)
			}
			d.Feed(chunk)
			r = d.Rest()
		}
		if f := d.TakeLine(len(benchLine)); len(f) != len(benchLine) || len(r) < len(f) {
			b.Fatalf("TakeLine = %d bytes", len(f))
		}
	}
}
