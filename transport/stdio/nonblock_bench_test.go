//go:build unix

package stdio

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkTryWrite is the reader's write of one batch of answers (16 KiB,
// about 54 echo answers) to a non-blocking pipe, read back by the same
// goroutine.
func BenchmarkTryWrite(b *testing.B) {
	r, _, rw := rawPipe(b)
	batch := bytes.Repeat([]byte("x"), 16<<10)
	buf := make([]byte, len(batch))
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		if n, err := rw.tryWrite(batch); n != len(batch) || err != nil {
			b.Fatalf("tryWrite = %d, %v", n, err)
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			b.Fatal(err)
		}
	}
}
