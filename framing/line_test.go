package framing

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// tooLongMark stands for an ErrLineTooLong result in collected frame lists.
const tooLongMark = "\x00ERR"

// refFrames is the reference splitter the framers are checked against: split
// on '\n' (the last piece is a line too), strip one trailing '\r', reject
// lines over maxLine, skip lines made only of ' ', '\t' and '\r'.
func refFrames(in []byte, maxLine int) []string {
	var out []string
	for _, line := range bytes.Split(in, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) > maxLine:
			out = append(out, tooLongMark)
		case len(bytes.Trim(line, " \t\r")) == 0:
		default:
			out = append(out, string(line))
		}
	}
	return out
}

// chunkReader serves data in pieces whose sizes cycle through sizes, then
// io.EOF. With eofWithData the last piece comes with io.EOF.
type chunkReader struct {
	data        []byte
	sizes       []int
	i           int
	eofWithData bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	n = max(1, min(n, len(p), len(c.data)))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	if c.eofWithData && len(c.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// readAll drains a Reader, copying frames, and returns the final error.
func readAll(t testing.TB, r *Reader) ([]string, error) {
	t.Helper()
	var out []string
	for {
		f, err := r.Next()
		switch {
		case errors.Is(err, ErrLineTooLong):
			if f != nil {
				t.Fatalf("ErrLineTooLong with a frame %q", f)
			}
			out = append(out, tooLongMark)
		case err != nil:
			return out, err
		case len(f) == 0:
			t.Fatalf("empty frame")
		default:
			out = append(out, string(f))
		}
	}
}

// decodeChunks feeds chunks to d, scribbling over each chunk once Next asks
// for more (the decoder must have copied what it keeps), then calls End.
func decodeChunks(t testing.TB, d *Decoder, chunks [][]byte) []string {
	t.Helper()
	var out []string
	drain := func() {
		for {
			f, err := d.Next()
			switch {
			case errors.Is(err, ErrLineTooLong):
				out = append(out, tooLongMark)
			case err != nil:
				t.Fatalf("Decoder.Next: unexpected error %v", err)
			case f == nil:
				return
			case len(f) == 0:
				t.Fatalf("empty frame")
			default:
				out = append(out, string(f))
			}
		}
	}
	for _, c := range chunks {
		buf := append([]byte(nil), c...)
		d.Feed(buf)
		drain()
		for i := range buf {
			buf[i] = '#'
		}
	}
	d.End()
	drain()
	return out
}

// splitEvery cuts in into pieces of n bytes.
func splitEvery(in []byte, n int) [][]byte {
	var out [][]byte
	for len(in) > n {
		out = append(out, in[:n])
		in = in[n:]
	}
	return append(out, in)
}

func equalFrames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shortList abbreviates long frames in failure messages.
func shortList(fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		if len(f) > 40 {
			f = f[:20] + "…(" + itoa(len(f)) + " bytes)"
		}
		out[i] = f
	}
	return out
}

var framingCases = []struct {
	name    string
	in      string
	maxLine int
	want    []string
}{
	{name: "plain", in: "a\nbb\nccc\n", want: []string{"a", "bb", "ccc"}},
	{name: "crlf stripped", in: "{\"a\":1}\r\n{\"b\":2}\r\n", want: []string{`{"a":1}`, `{"b":2}`}},
	{name: "only one cr stripped", in: "a\r\r\nb\n", want: []string{"a\r", "b"}},
	{name: "inner cr kept", in: "a\rb\n", want: []string{"a\rb"}},
	{name: "blank lines skipped", in: "\n\n\r\na\n\n\r\nb\n\n", want: []string{"a", "b"}},
	{name: "whitespace lines skipped", in: "  \t\n\t\r\n \r\r\n{}\n   \n", want: []string{"{}"}},
	{name: "surrounding space kept", in: "  {} \t\n", want: []string{"  {} \t"}},
	{name: "final line without newline", in: "a\nlast", want: []string{"a", "last"}},
	{name: "final line with cr at eof", in: "a\nlast\r", want: []string{"a", "last"}},
	{name: "final blank line at eof", in: "a\n \t", want: []string{"a"}},
	{name: "empty input", in: "", want: nil},
	{name: "utf8", in: "héllo 世界 🎉\n", want: []string{"héllo 世界 🎉"}},
	{name: "exactly max", in: "12345678\n", maxLine: 8, want: []string{"12345678"}},
	{name: "exactly max crlf", in: "12345678\r\n", maxLine: 8, want: []string{"12345678"}},
	{name: "max plus one rejected once then resume", in: "123456789\nok\n", maxLine: 8, want: []string{tooLongMark, "ok"}},
	{name: "max plus one ending in cr", in: "12345678x\r\nok\n", maxLine: 8, want: []string{tooLongMark, "ok"}},
	{name: "long line with trailing cr only", in: "12345678\r\r\nok\n", maxLine: 8, want: []string{tooLongMark, "ok"}},
	{name: "very long line resumes", in: "a\n" + strings.Repeat("x", 100) + "\nb\n", maxLine: 8, want: []string{"a", tooLongMark, "b"}},
	{name: "two long lines in a row", in: strings.Repeat("x", 20) + "\n" + strings.Repeat("y", 9) + "\nz\n", maxLine: 8, want: []string{tooLongMark, tooLongMark, "z"}},
	{name: "long spaces rejected not skipped", in: strings.Repeat(" ", 9) + "\nz\n", maxLine: 8, want: []string{tooLongMark, "z"}},
	{name: "long final line at eof", in: "a\n" + strings.Repeat("x", 50), maxLine: 8, want: []string{"a", tooLongMark}},
	{name: "exactly max at eof", in: "a\n12345678", maxLine: 8, want: []string{"a", "12345678"}},
	{name: "max plus one at eof", in: "a\n123456789", maxLine: 8, want: []string{"a", tooLongMark}},
	{name: "no limit", in: strings.Repeat("x", 100) + "\n", maxLine: -1, want: []string{strings.Repeat("x", 100)}},
}

// TestFramingTable runs every case through a Reader (whole, one byte per
// Read, at every split point) and a Decoder (same chunkings), and checks the
// table against the reference splitter too.
func TestFramingTable(t *testing.T) {
	for i, tc := range framingCases {
		in := []byte(tc.in)
		opt := ReaderConfig{MaxLine: tc.maxLine}
		maxLine, _ := opt.normalize()
		if ref := refFrames(in, maxLine); !equalFrames(ref, tc.want) {
			t.Fatalf("#%d %s: reference splitter gives %q, table wants %q", i, tc.name, ref, tc.want)
		}
		chunkings := map[string][][]byte{"whole": {in}, "bytewise": splitEvery(in, 1)}
		for k := 1; k < len(in); k++ {
			chunkings["split@"+itoa(k)] = [][]byte{in[:k], in[k:]}
		}
		for cname, chunks := range chunkings {
			sizes := make([]int, len(chunks))
			for j, c := range chunks {
				sizes[j] = len(c)
			}
			for _, eofWithData := range []bool{false, true} {
				r := NewReader(&chunkReader{data: in, sizes: sizes, eofWithData: eofWithData}, opt)
				got, err := readAll(t, r)
				if err != io.EOF {
					t.Errorf("#%d %s/%s Reader: final error %v, want io.EOF", i, tc.name, cname, err)
				}
				if !equalFrames(got, tc.want) {
					t.Errorf("#%d %s/%s Reader: got %q, want %q", i, tc.name, cname, got, tc.want)
				}
				r.Release()
			}
			d := NewDecoder(opt)
			if got := decodeChunks(t, d, chunks); !equalFrames(got, tc.want) {
				t.Errorf("#%d %s/%s Decoder: got %q, want %q", i, tc.name, cname, got, tc.want)
			}
			if d.Buffered() != 0 {
				t.Errorf("#%d %s/%s Decoder: Buffered = %d after End", i, tc.name, cname, d.Buffered())
			}
			d.Release()
		}
	}
}

func TestDecoderZeroCopy(t *testing.T) {
	chunk := []byte("{\"a\":1}\n{\"b\":\nxx")
	d := NewDecoder(ReaderConfig{})
	d.Feed(chunk)
	f, err := d.Next()
	if err != nil || string(f) != `{"a":1}` {
		t.Fatalf("Next = %q, %v", f, err)
	}
	if &f[0] != &chunk[0] {
		t.Errorf("frame inside the chunk was copied")
	}
	if cap(f) != len(f) {
		t.Errorf("frame cap %d, want clipped to len %d", cap(f), len(f))
	}
	if f, err := d.Next(); err != nil || string(f) != `{"b":` {
		t.Fatalf("Next = %q, %v", f, err)
	}
	if f, err := d.Next(); f != nil || err != nil {
		t.Fatalf("Next = %q, %v; want nil, nil", f, err)
	}
	if d.Buffered() != 2 {
		t.Errorf("Buffered = %d, want 2", d.Buffered())
	}
	d.Feed([]byte("x\n"))
	if f, err := d.Next(); err != nil || string(f) != "xxx" {
		t.Fatalf("Next = %q, %v", f, err)
	}
}

// TestDecoderFeedUndrained covers Feed before Next returned (nil, nil): the
// rest of the old chunk is copied and its frames still come out, in order.
func TestDecoderFeedUndrained(t *testing.T) {
	tests := []struct {
		name    string
		chunks  []string
		pulls   []int // frames pulled after each Feed (-1: drain)
		maxLine int
		want    []string
	}{
		{name: "detach with Feed(nil)", chunks: []string{"a\nb\nc\npart", "", "ial\nd\n"}, pulls: []int{1, 0, -1}, want: []string{"a", "b", "c", "partial", "d"}},
		{name: "backlog then more", chunks: []string{"a\nb", "c\nd\n", "e\n"}, pulls: []int{0, 1, -1}, want: []string{"a", "bc", "d", "e"}},
		{name: "backlog with long line", chunks: []string{"a\n123456789\nb\n", "c\n"}, pulls: []int{1, -1}, maxLine: 8, want: []string{"a", tooLongMark, "b", "c"}},
		{name: "backlog while discarding", chunks: []string{"1234567890", "999\nok\n", "x\n"}, pulls: []int{1, 0, -1}, maxLine: 8, want: []string{tooLongMark, "ok", "x"}},
		{name: "backlog blank lines", chunks: []string{"\n \n\r\na\n", "b\n"}, pulls: []int{0, -1}, want: []string{"a", "b"}},
	}
	for i, tc := range tests {
		d := NewDecoder(ReaderConfig{MaxLine: tc.maxLine})
		var got []string
		pull := func(n int) {
			for k := 0; n < 0 || k < n; k++ {
				f, err := d.Next()
				switch {
				case err == ErrLineTooLong:
					got = append(got, tooLongMark)
				case err != nil:
					t.Fatalf("#%d: %v", i, err)
				case f == nil:
					return
				default:
					got = append(got, string(f))
				}
			}
		}
		for j, c := range tc.chunks {
			buf := []byte(c)
			d.Feed(buf)
			pull(tc.pulls[j])
			if tc.pulls[j] >= 0 {
				d.Feed(nil) // detach: the caller reuses buf now
			}
			for k := range buf {
				buf[k] = '#'
			}
		}
		d.End()
		pull(-1)
		if !equalFrames(got, tc.want) {
			t.Errorf("#%d %s: got %q, want %q", i, tc.name, got, tc.want)
		}
	}
}

func TestDecoderTooLongSnippetAndCounter(t *testing.T) {
	d := NewDecoder(ReaderConfig{MaxLine: 40})
	long := strings.Repeat("0123456789", 10)
	d.Feed([]byte(long[:25]))
	if f, err := d.Next(); f != nil || err != nil {
		t.Fatalf("Next = %q, %v", f, err)
	}
	d.Feed([]byte(long[25:]))
	if _, err := d.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
	if got, want := string(d.LastTooLong()), long[:snippetLen]; got != want {
		t.Errorf("LastTooLong = %q, want %q", got, want)
	}
	if !strings.HasPrefix(ErrLineTooLong.Error(), "framing: ") {
		t.Errorf("error text %q lacks the package prefix", ErrLineTooLong)
	}
	d.Feed([]byte("tail\nok\n"))
	if f, err := d.Next(); err != nil || string(f) != "ok" {
		t.Fatalf("Next = %q, %v; want ok", f, err)
	}
	if d.TooLong() != 1 {
		t.Errorf("TooLong = %d, want 1", d.TooLong())
	}
	if d.Buffered() != 0 {
		t.Errorf("Buffered = %d, want 0", d.Buffered())
	}
}

// TestUTF8SplitAcrossReads cuts multi-byte characters at every byte.
func TestUTF8SplitAcrossReads(t *testing.T) {
	line := `{"text":"héllo wörld — 世界 🎉🎉 ünïcödé"}`
	in := []byte(line + "\n" + line + "\r\n")
	for k := 1; k < len(in); k++ {
		r := NewReader(&chunkReader{data: in, sizes: []int{k}}, ReaderConfig{})
		got, err := readAll(t, r)
		if err != io.EOF || len(got) != 2 || got[0] != line || got[1] != line {
			t.Fatalf("chunk %d: Reader got %q, %v", k, got, err)
		}
		r.Release()
		d := NewDecoder(ReaderConfig{})
		got = decodeChunks(t, d, splitEvery(in, k))
		if len(got) != 2 || got[0] != line || got[1] != line {
			t.Fatalf("chunk %d: Decoder got %q", k, got)
		}
		for _, f := range got {
			if !utf8.ValidString(f) {
				t.Fatalf("chunk %d: invalid UTF-8 %q", k, f)
			}
		}
	}
}

func TestDecoderReleaseAndReuse(t *testing.T) {
	d := NewDecoder(ReaderConfig{})
	d.Feed([]byte("partial"))
	if f, err := d.Next(); f != nil || err != nil {
		t.Fatalf("Next = %q, %v", f, err)
	}
	d.Release()
	d.Release() // idempotent
	if d.Buffered() != 0 || d.scratchCap() != 0 {
		t.Fatalf("after Release: Buffered %d, scratch cap %d", d.Buffered(), d.scratchCap())
	}
	d.Feed([]byte("fresh\n"))
	if f, err := d.Next(); err != nil || string(f) != "fresh" {
		t.Fatalf("Next after Release = %q, %v", f, err)
	}
}

// TestDecoderTakeLine: Rest is the chunk from the next line's start only
// while the decoder holds nothing of its own, and TakeLine takes a line
// there as Next would, or nothing when Next would skip or reject it.
func TestDecoderTakeLine(t *testing.T) {
	d := NewDecoder(ReaderConfig{MaxLine: 8})
	defer d.Release()
	d.Feed([]byte("{\"a\":1}\r\n123456789\n{\"b\":22}\n\n \t\r\nab"))
	for i, want := range []struct {
		n     int    // the '\n' in Rest
		frame string // "": TakeLine declines
	}{
		{8, `{"a":1}`}, {9, ""}, {8, `{"b":22}`}, {0, ""}, // MaxLine: taken
	} {
		r := d.Rest()
		if k := bytes.IndexByte(r, '\n'); k != want.n {
			t.Fatalf("%d: Rest %q: '\\n' at %d, want %d", i, r, k, want.n)
		}
		if fr := d.TakeLine(want.n + 1); fr != nil {
			t.Fatalf("%d: TakeLine past the '\\n': %q", i, fr)
		}
		fr := d.TakeLine(want.n)
		if string(fr) != want.frame {
			t.Fatalf("%d: TakeLine = %q, want %q", i, fr, want.frame)
		}
		if i == 1 {
			// Next rejects the long line.
			if fr, err := d.Next(); fr != nil || err != ErrLineTooLong {
				t.Fatalf("%d: Next = %q, %v", i, fr, err)
			}
		}
	}
	// Next skips the blank lines; "ab" is a partial line: Next keeps it,
	// and Rest, which would start
	// in the middle of the line once more input comes, is nil.
	if fr, err := d.Next(); fr != nil || err != nil {
		t.Fatalf("Next = %q, %v", fr, err)
	}
	d.Feed([]byte("c\n{}\n"))
	if r := d.Rest(); r != nil {
		t.Fatalf("Rest = %q while a partial line is held", r)
	}
	if fr, _ := d.Next(); string(fr) != "abc" {
		t.Fatalf("Next = %q", fr)
	}
	// The line held is consumed: the chunk's next line is at Rest again.
	if r := d.Rest(); string(r) != "{}\n" {
		t.Fatalf("Rest = %q", r)
	}
	if fr := d.TakeLine(2); string(fr) != "{}" || len(d.Rest()) != 0 || d.Unread() != 0 {
		t.Fatalf("TakeLine = %q, then Rest %q, Unread %d", fr, d.Rest(), d.Unread())
	}
}

// takeRestOrLine is how linestream takes a line it has peeked: TakeRest,
// and TakeLine when TakeRest declines.
func takeRestOrLine(d *Decoder, rest []byte, n int) []byte {
	if fr := d.TakeRest(rest, n); fr != nil {
		return fr
	}
	return d.TakeLine(n)
}

// TestDecoderTakeRest: TakeRest takes exactly the lines TakeLine takes in
// its usual case, consuming the same bytes, and declines (nil, nothing
// consumed) for every other line, for an n not at the first '\n', and for
// a rest that is not the decoder's unconsumed chunk.
func TestDecoderTakeRest(t *testing.T) {
	lines := []string{
		`{"a":1}`, `x`, `12345678`, `123456789`, `{"a":1}` + "\r", "{}\r", "{} ", "{}\t",
		"", " ", "\t\r", "\r", " {}", "\t{}", "1234567\r", "12345678\r",
	}
	for _, l := range lines {
		for _, next := range []string{"", "{}\n", "\n"} {
			in := []byte(l + "\n" + next)
			a := NewDecoder(ReaderConfig{MaxLine: 8})
			b := NewDecoder(ReaderConfig{MaxLine: 8})
			a.Feed(in)
			b.Feed(in)
			ra := a.Rest()
			n := bytes.IndexByte(ra, '\n')
			// Never past or before the '\n'.
			for _, m := range []int{n + 1, n - 1, -1, len(ra), len(ra) + 5} {
				if m == n {
					continue
				}
				if fr := a.TakeRest(ra, m); fr != nil {
					t.Fatalf("%q: TakeRest(%d) = %q, the '\\n' is at %d", in, m, fr, n)
				}
			}
			got := takeRestOrLine(a, ra, n)
			want := b.TakeLine(n)
			if string(got) != string(want) || (got == nil) != (want == nil) || a.Unread() != b.Unread() {
				t.Fatalf("%q: TakeRest/TakeLine = %q (unread %d), TakeLine = %q (unread %d)", in, got, a.Unread(), want, b.Unread())
			}
			if want != nil {
				// The rest it was given is consumed now.
				if got := a.TakeRest(ra, n); got != nil {
					t.Fatalf("%q: TakeRest took %q again from a rest already consumed", in, got)
				}
			}
			if want != nil && l[len(l)-1] > ' ' {
				// The usual line: TakeRest alone takes it.
				c := NewDecoder(ReaderConfig{MaxLine: 8})
				c.Feed(in)
				if fr := c.TakeRest(c.Rest(), n); string(fr) != string(want) {
					t.Fatalf("%q: TakeRest = %q, want %q", in, fr, want)
				}
				c.Release()
			}
			a.Release()
			b.Release()
		}
	}
	// A partial line held in own: Rest is nil, and a rest made from the
	// chunk (its length is the unconsumed chunk's) is declined.
	d := NewDecoder(ReaderConfig{MaxLine: 8})
	defer d.Release()
	d.Feed([]byte("ab"))
	if fr, err := d.Next(); fr != nil || err != nil {
		t.Fatalf("Next = %q, %v", fr, err)
	}
	chunk := []byte("c\n{}\n")
	d.Feed(chunk)
	if fr := d.TakeRest(chunk, 1); fr != nil {
		t.Fatalf("TakeRest = %q while a partial line is held", fr)
	}
	if fr, _ := d.Next(); string(fr) != "abc" {
		t.Fatalf("Next = %q", fr)
	}
	if fr, _ := d.Next(); string(fr) != "{}" {
		t.Fatalf("Next = %q", fr)
	}
	// A line being discarded (over MaxLine, no '\n' yet): the same.
	d.Feed([]byte("123456789012"))
	if fr, err := d.Next(); fr != nil || err != ErrLineTooLong {
		t.Fatalf("Next = %q, %v", fr, err)
	}
	chunk = []byte("zz\n{}\n")
	d.Feed(chunk)
	if fr := d.TakeRest(chunk, 2); fr != nil {
		t.Fatalf("TakeRest = %q while a line is discarded", fr)
	}
	if fr, err := d.Next(); string(fr) != "{}" || err != nil {
		t.Fatalf("Next = %q, %v", fr, err)
	}
	// Another slice of the unconsumed chunk's length, not the chunk: declined,
	// and nothing is consumed.
	e := NewDecoder(ReaderConfig{MaxLine: 8})
	defer e.Release()
	e.Feed([]byte("{}\n[]\n"))
	other := []byte("ab\ncd\n")
	if fr := e.TakeRest(other, 2); fr != nil {
		t.Fatalf("TakeRest = %q from a slice that is not the decoder's rest", fr)
	}
	if fr, _ := e.Next(); string(fr) != "{}" {
		t.Fatalf("Next = %q after a declined TakeRest", fr)
	}
}
