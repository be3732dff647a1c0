package framing

import (
	"bytes"
	"io"
	"testing"
)

// fuzzOptions maps the fuzzer's maxLine byte to options: 0 is the default
// limit, 255 no limit, anything else that many bytes.
func fuzzOptions(maxLine uint8) ReaderConfig {
	switch maxLine {
	case 0:
		return ReaderConfig{}
	case 255:
		return ReaderConfig{MaxLine: -1}
	}
	return ReaderConfig{MaxLine: int(maxLine)}
}

// fuzzSizes turns split into the two chunk sizes (1..256) that cycle.
func fuzzSizes(split uint16) []int {
	return []int{int(split%256) + 1, int(split/256) + 1}
}

func addFuzzSeeds(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\n"), uint16(0), uint8(0), uint8(0))
	f.Add([]byte("a\r\n\r\n  \t\nb\r\nlast"), uint16(3), uint8(0), uint8(1))
	f.Add([]byte("12345678\n123456789\nok\n"), uint16(0x0405), uint8(8), uint8(2))
	f.Add([]byte("12345678\r\n1234567\r\r\n"+"xxxxxxxxxxxxxxxxxxxxxxxx"), uint16(0x0101), uint8(8), uint8(3))
	f.Add([]byte("héllo 世界 🎉\n\xff\xfe\n"), uint16(0x0200), uint8(255), uint8(4))
	f.Add([]byte("\n\n\n\r\r\n \n"), uint16(1), uint8(1), uint8(6))
	f.Add([]byte("{\"a\":1}\r\n\n  \n{\"b\":2}\n123456789\nok"), uint16(0x0305), uint8(8), uint8(16))
	f.Add([]byte("12345678\r\n1234567\r\r\n"+"xxxxxxxxxxxxxxxxxxxxxxxx\nyy\n"), uint16(0x4040), uint8(8), uint8(16+2))
}

// FuzzReader checks Reader, over arbitrarily chunked reads, against the
// reference splitter, including where ErrLineTooLong appears.
func FuzzReader(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, split uint16, maxLine uint8, flags uint8) {
		opt := fuzzOptions(maxLine)
		limit, _ := opt.normalize()
		want := refFrames(data, limit)
		src := &chunkReader{data: data, sizes: fuzzSizes(split), eofWithData: flags&1 != 0}
		r := NewReader(src, opt)
		defer r.Release()
		got, err := readAll(t, r)
		if err != io.EOF {
			t.Fatalf("final error %v, want io.EOF", err)
		}
		if !equalFrames(got, want) {
			t.Fatalf("Reader frames %q\nreference     %q", shortList(got), shortList(want))
		}
		if n := countMark(want); r.TooLong() != uint64(n) {
			t.Fatalf("TooLong = %d, want %d", r.TooLong(), n)
		}
		if r.Buffered() != 0 {
			t.Fatalf("Buffered = %d at EOF", r.Buffered())
		}
	})
}

// FuzzDecoder checks Decoder against the reference splitter. Chunks are fed
// in the cycling sizes; flags>>1&7, when not 0, caps how many frames are
// pulled before the next Feed, which exercises the copy-on-undrained-Feed
// path; flags&16 takes each line Rest and TakeLine will take with them,
// and flags&32 tries TakeRest first, as linestream does.
// Each chunk is scribbled over as soon as the decoder no longer needs
// it, to catch frames that alias released input.
func FuzzDecoder(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, split uint16, maxLine uint8, flags uint8) {
		opt := fuzzOptions(maxLine)
		limit, _ := opt.normalize()
		want := refFrames(data, limit)
		pullCap := int(flags>>1) & 7
		sizes := fuzzSizes(split)

		d := NewDecoder(opt)
		defer d.Release()
		var got []string
		// pull returns true if the decoder asked for more input.
		pull := func(n int) bool {
			for i := 0; n == 0 || i < n; i++ {
				if flags&16 != 0 {
					// Take the line by Rest and TakeLine when it can be,
					// as linestream does after codec.PeekLine.
					if r := d.Rest(); len(r) != 0 {
						if k := bytes.IndexByte(r, '\n'); k >= 0 {
							var fr []byte
							if flags&32 != 0 {
								fr = d.TakeRest(r, k) // TakeLine when it declines
							}
							if fr == nil {
								fr = d.TakeLine(k)
							}
							if fr != nil {
								got = append(got, string(fr))
								continue
							}
						}
					}
				}
				fr, err := d.Next()
				switch {
				case err == ErrLineTooLong:
					if fr != nil {
						t.Fatalf("frame with ErrLineTooLong")
					}
					got = append(got, tooLongMark)
				case err != nil:
					t.Fatalf("Next: %v", err)
				case fr == nil:
					return true
				case len(fr) == 0:
					t.Fatalf("empty frame")
				default:
					got = append(got, string(fr))
				}
			}
			return false
		}
		scribble := func(b []byte) {
			for i := range b {
				b[i] = '\n'
			}
		}
		var prev []byte
		rest := data
		for i := 0; len(rest) > 0; i++ {
			n := min(sizes[i%2], len(rest))
			chunk := append([]byte(nil), rest[:n]...)
			rest = rest[n:]
			d.Feed(chunk)
			scribble(prev) // Feed copied whatever of it was left
			prev = chunk
			if pull(pullCap) {
				scribble(chunk)
				prev = nil
			}
		}
		d.End()
		scribble(prev)
		pull(0)
		if !equalFrames(got, want) {
			t.Fatalf("Decoder frames %q\nreference      %q", shortList(got), shortList(want))
		}
		if n := countMark(want); d.TooLong() != uint64(n) {
			t.Fatalf("TooLong = %d, want %d", d.TooLong(), n)
		}
		if d.Buffered() != 0 {
			t.Fatalf("Buffered = %d after End", d.Buffered())
		}
	})
}

func countMark(fs []string) int {
	n := 0
	for _, f := range fs {
		if f == tooLongMark {
			n++
		}
	}
	return n
}
