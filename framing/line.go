package framing

import (
	"bytes"
	"math"
)

const (
	// DefaultMaxLine is the default frame limit in bytes, excluding the
	// line terminator. It is also mcpwire's one default bound on a single
	// message, whatever carries it: the line transports, the HTTP request
	// bodies (streamhttp and legacy) and the clients' replies derive
	// their defaults from it, so that a message one transport accepts is
	// not refused by another.
	DefaultMaxLine = 4 << 20

	// DefaultReadSize is the default Reader read buffer (and the largest
	// scratch buffer a Reader or Decoder keeps between lines). 64 KiB is
	// what a Linux pipe holds, so one stdio Read drains a full pipe.
	DefaultReadSize = 64 << 10

	// minScratch is the first scratch buffer acquired for a split line.
	minScratch = class4K

	// snippetLen is how many leading bytes of an over-long line are kept
	// for diagnostics (see Decoder.LastTooLong).
	snippetLen = 32
)

// ReaderConfig configures a Reader or a Decoder. Its fields follow the
// package's rule for limits (see Limits in the package documentation): 0
// is the default, negative is no limit unless the field says otherwise.
type ReaderConfig struct {
	// MaxLine is the largest frame accepted, in bytes, excluding the '\n'
	// and a '\r' right before it. 0 means DefaultMaxLine (4 MiB). A
	// negative value disables the limit: memory then grows with the
	// longest line a peer sends, which is unsafe on untrusted input.
	MaxLine int

	// ReadSize is, for a Reader, the size in bytes of the read buffer, so
	// the most bytes asked of the io.Reader per Read call; it is rounded up
	// to a buffer pool size class. For both Reader and Decoder it is also
	// the largest scratch buffer (used for lines split across reads or
	// chunks) kept once the line that needed it is consumed; bigger ones go
	// back to the pool or to the garbage collector. 0 means DefaultReadSize
	// (64 KiB). It sizes a buffer rather than bounding a peer, so it cannot
	// be unlimited: a negative value is taken as 0, the default.
	ReadSize int
}

func (o ReaderConfig) normalize() (maxLine, readSize int) {
	maxLine = o.MaxLine
	switch {
	case maxLine == 0:
		maxLine = DefaultMaxLine
	case maxLine < 0:
		maxLine = math.MaxInt
	}
	readSize = o.ReadSize
	if readSize <= 0 {
		readSize = DefaultReadSize
	}
	return maxLine, readSize
}

// lineKind is what a complete input line turned out to be.
type lineKind uint8

const (
	lineFrame   lineKind = iota // a frame to hand out
	lineBlank                   // empty or only ' ', '\t', '\r': skipped
	lineTooLong                 // longer than MaxLine: rejected once
)

// classify strips one trailing '\r' from a complete line (given without its
// '\n') and sorts it. The frame it returns has its capacity clipped so an
// append by the caller cannot overwrite the following input.
func classify(line []byte, maxLine int) ([]byte, lineKind) {
	n := len(line)
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	if n > maxLine {
		return nil, lineTooLong
	}
	if n == 0 {
		return nil, lineBlank
	}
	line = line[:n:n]
	if c := line[0]; c != ' ' && c != '\t' && c != '\r' {
		return line, lineFrame // fast path: JSON starts with a non-blank
	}
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return line, lineFrame
		}
	}
	return nil, lineBlank
}

// newline is the chunk End feeds. The decoder never writes to a chunk.
var newline = []byte{'\n'}

// Decoder is a push framer for newline-delimited frames: the caller hands it
// chunks of input with Feed and pulls frames with Next. It is meant for event
// loops (gnet's OnTraffic) that own the input buffer. Reader is built on it,
// so both apply exactly the same rules (see Reader.Next).
//
// Frames lying wholly inside a chunk are returned as sub-slices of that chunk
// (zero copy). Only a line that straddles chunks is copied, into a scratch
// buffer from the pool.
//
// A Decoder must not be copied after first use and is not safe for
// concurrent use.
type Decoder struct {
	_ noCopy

	chunk []byte // borrowed from the caller; chunk[cp:] is unconsumed
	cp    int

	// own holds input copied out of earlier chunks; own[op:] is unconsumed.
	// Normally it is one partial line (no '\n'); after Feed on an undrained
	// chunk it may be a backlog of several lines. own[op:clean] is known to
	// hold no '\n'.
	own   []byte
	op    int
	clean int

	maxLine    int
	keep       int // largest own buffer kept while empty
	discarding bool
	tooLong    uint64
	snip       [snippetLen]byte
	snipN      int
}

// NewDecoder returns a Decoder applying opt.
func NewDecoder(opt ReaderConfig) *Decoder {
	d := new(Decoder)
	d.init(opt)
	return d
}

func (d *Decoder) init(opt ReaderConfig) {
	d.maxLine, d.keep = opt.normalize()
}

// Feed hands the decoder the next chunk of input. The decoder may keep
// referring to chunk until Next returns (nil, nil), so the caller must not
// modify or reuse chunk before that. The decoder never writes to chunk.
//
// Feed is meant to be called once Next has returned (nil, nil). If the
// previous chunk is not fully consumed yet, Feed first copies its unconsumed
// bytes into internal storage (Buffered counts them) and the frames in them
// come out first; so Feed(nil) detaches the decoder from a chunk the caller
// is about to reuse, for example when it stops pulling frames under
// backpressure. That copy may invalidate the frame returned last.
func (d *Decoder) Feed(chunk []byte) {
	if d.cp < len(d.chunk) {
		d.appendOwn(d.chunk[d.cp:]) // backlog: clean stays where it was
	}
	d.chunk = chunk
	d.cp = 0
}

// End tells the decoder that the input has ended. A final line without a
// trailing '\n' is then returned by the following Next calls like any other
// line (or rejected with ErrLineTooLong); a line being discarded ends. Call
// Next until it returns (nil, nil) afterwards. The decoder can then be fed a
// new stream.
func (d *Decoder) End() {
	d.Feed(newline)
}

// Next returns the next complete frame: a non-blank line without its '\n'
// and without a '\r' right before it. It returns (nil, ErrLineTooLong) once
// for each line longer than MaxLine, and (nil, nil) when more input is
// needed; at that point the decoder has copied whatever partial line it must
// keep, so the caller may reuse the chunk.
//
// The returned slice aliases either the chunk given to Feed or the
// decoder's scratch buffer. It is valid only until the next call to Next,
// Feed, End or Release, and only as long as the caller leaves the chunk
// untouched; copy it to keep it.
func (d *Decoder) Next() ([]byte, error) {
	if len(d.own) != 0 || d.discarding {
		return d.nextSlow()
	}
	for {
		rest := d.chunk[d.cp:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return d.holdFirst(rest)
		}
		d.cp += i + 1
		frame, kind := classify(rest[:i], d.maxLine)
		switch kind {
		case lineFrame:
			return frame, nil
		case lineTooLong:
			return nil, d.reject(rest[:i], nil)
		}
	}
}

// Rest returns the unconsumed part of the chunk given to Feed when the
// next line starts there: the decoder holds no partial line or backlog of
// its own and is not discarding a line; nil otherwise. It is empty when
// the chunk is consumed (callers test its length: so that Rest inlines).
// It is for a caller that finds where a line ends while it reads it
// (codec.PeekLine) and then takes it with TakeRest or TakeLine instead of
// Next. Like Next, it invalidates the frame returned last; the slice is
// valid as Next's frames are.
func (d *Decoder) Rest() []byte {
	if len(d.own) != 0 || d.discarding {
		return d.restSlow()
	}
	return d.chunk[d.cp:]
}

// restSlow is Rest when own holds bytes or a line is being discarded.
func (d *Decoder) restSlow() []byte {
	if len(d.own) != 0 {
		if d.op != len(d.own) || d.discarding {
			return nil
		}
		d.dropOwn() // all consumed; the frame returned last may alias it
	}
	if d.discarding {
		return nil
	}
	return d.chunk[d.cp:]
}

// TakeLine consumes the line Rest()[:n] and the '\n' at Rest()[n], which
// the caller has found to be the first '\n' there, and returns its frame
// as Next would have. It consumes nothing and returns nil when Next would
// not return that line as a frame (it is blank or longer than MaxLine:
// Next then skips or rejects it), or when Rest()[n] is not a '\n'.
func (d *Decoder) TakeLine(n int) []byte {
	rest := d.chunk[d.cp:]
	if uint(n) >= uint(len(rest)) || rest[n] != '\n' || len(d.own) != 0 || d.discarding {
		return nil // not a '\n', or Rest was not called or returned nil
	}
	// The usual line ends with a byte above ' ': it is not blank and has
	// no '\r' to strip, so classify would return it as it is.
	if n > 0 && rest[n-1] > ' ' && n <= d.maxLine {
		d.cp += n + 1
		return rest[:n:n]
	}
	frame, kind := classify(rest[:n], d.maxLine)
	if kind != lineFrame {
		return nil
	}
	d.cp += n + 1
	return frame
}

// TakeRest is TakeLine's usual case, small enough to inline, for a caller
// that holds rest, what Rest has just returned, and has found rest[n] to
// be the first '\n' in it. When the line ends with a byte above ' ' (it
// is not blank and has no '\r' to strip), is within MaxLine, and rest is
// still the decoder's unconsumed chunk, it consumes the line and its
// '\n' and returns rest[:n], as TakeLine(n) would. Otherwise (also when
// rest is another slice, even one of the same length) it consumes nothing
// and returns nil: the caller then asks TakeLine(n).
func (d *Decoder) TakeRest(rest []byte, n int) []byte {
	if n > 0 && n < len(rest) && rest[n] == '\n' && rest[n-1] > ' ' && n <= d.maxLine && d.cp < len(d.chunk) && &rest[0] == &d.chunk[d.cp] && len(rest) == len(d.chunk)-d.cp && len(d.own) == 0 && !d.discarding {
		d.cp += n + 1
		return rest[:n:n]
	}
	return nil
}

// holdFirst keeps rest, the start of a line with no '\n' yet, while own is
// empty. It returns (nil, nil), or ErrLineTooLong when rest alone already
// exceeds the limit (then nothing is copied and the line is discarded).
func (d *Decoder) holdFirst(rest []byte) ([]byte, error) {
	d.cp = len(d.chunk)
	if len(rest) == 0 {
		return nil, nil
	}
	// A partial line of maxLine+1 bytes may still fit: its last byte may be
	// the '\r' of a "\r\n". The -1 avoids overflow when maxLine is MaxInt.
	if len(rest)-1 > d.maxLine {
		d.discarding = true
		return nil, d.reject(rest, nil)
	}
	d.appendOwn(rest)
	d.clean = len(d.own)
	return nil, nil
}

// nextSlow is Next when own holds bytes or a line is being discarded.
func (d *Decoder) nextSlow() ([]byte, error) {
	for {
		if d.op == len(d.own) {
			// The frame returned last may alias own; it is invalid now.
			d.dropOwn()
		}
		if d.discarding {
			if !d.skip() {
				return nil, nil
			}
			continue
		}
		if len(d.own) == 0 {
			return d.Next()
		}
		// A complete line inside own (only after a backlog Feed).
		if d.clean < len(d.own) {
			if i := bytes.IndexByte(d.own[d.clean:], '\n'); i >= 0 {
				end := d.clean + i
				line := d.own[d.op:end]
				d.op = end + 1
				d.clean = d.op
				frame, kind := classify(line, d.maxLine)
				switch kind {
				case lineFrame:
					return frame, nil
				case lineTooLong:
					return nil, d.reject(line, nil)
				}
				continue
			}
			d.clean = len(d.own)
		}
		// own[op:] is a partial line: complete it from the chunk.
		held := len(d.own) - d.op
		rest := d.chunk[d.cp:]
		j := bytes.IndexByte(rest, '\n')
		if j < 0 {
			d.cp = len(d.chunk)
			if held+len(rest)-1 > d.maxLine {
				d.discarding = true
				return nil, d.reject(d.own[d.op:], rest)
			}
			d.appendOwn(rest)
			d.clean = len(d.own)
			return nil, nil
		}
		d.cp += j + 1
		part := rest[:j]
		if held+len(part)-1 > d.maxLine {
			return nil, d.reject(d.own[d.op:], part)
		}
		d.appendOwn(part)
		line := d.own[d.op:]
		d.op = len(d.own)
		d.clean = d.op
		frame, kind := classify(line, d.maxLine)
		switch kind {
		case lineFrame:
			return frame, nil
		case lineTooLong:
			return nil, d.reject(line, nil)
		}
	}
}

// skip discards input up to and including the next '\n'. It reports whether
// it found one; if not, all input is consumed and still being discarded.
func (d *Decoder) skip() bool {
	if d.op < len(d.own) {
		if i := bytes.IndexByte(d.own[d.clean:], '\n'); i >= 0 {
			d.op = d.clean + i + 1
			d.clean = d.op
			d.discarding = false
			return true
		}
		d.dropOwn()
	}
	rest := d.chunk[d.cp:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		d.cp += i + 1
		d.discarding = false
		return true
	}
	d.cp = len(d.chunk)
	return false
}

// reject counts an over-long line whose start is a followed by b, keeps a
// snippet of it, and drops the partial line held in own, if any.
func (d *Decoder) reject(a, b []byte) error {
	d.tooLong++
	n := copy(d.snip[:], a)
	n += copy(d.snip[n:], b)
	d.snipN = n
	if d.op < len(d.own) && d.clean >= len(d.own) {
		// own[op:] was the rejected partial line.
		d.op = len(d.own)
	}
	if d.op == len(d.own) {
		d.dropOwn()
	}
	return ErrLineTooLong
}

// appendOwn appends p to own, compacting and growing it through the pool.
// Growth is clamped to maxLine+1, the most a partial line ever needs, unless
// p itself (a backlog) needs more.
func (d *Decoder) appendOwn(p []byte) {
	if d.op > 0 {
		n := copy(d.own, d.own[d.op:])
		d.own = d.own[:n]
		d.clean -= d.op
		d.op = 0
	}
	need := len(d.own) + len(p)
	if need > cap(d.own) {
		c := max(2*cap(d.own), need, minScratch)
		if limit := d.maxLine; limit < math.MaxInt && c > limit+1 {
			c = max(limit+1, need)
		}
		nb := append(AcquireBuf(c), d.own...)
		ReleaseBuf(d.own)
		d.own = nb
	}
	d.own = append(d.own, p...)
}

// dropOwn empties own, giving a big buffer back.
func (d *Decoder) dropOwn() {
	d.own = d.own[:0]
	d.op = 0
	d.clean = 0
	if cap(d.own) > d.keep {
		ReleaseBuf(d.own)
		d.own = nil
	}
}

// Buffered returns the number of input bytes the decoder holds in its own
// storage: a partial line waiting for its end, plus any backlog copied by a
// Feed on an undrained chunk.
func (d *Decoder) Buffered() int { return len(d.own) - d.op }

// Unread returns the number of input bytes not consumed yet: what is left
// of the current chunk plus what Buffered counts. Zero means Next would
// return (nil, nil) without looking at anything.
func (d *Decoder) Unread() int { return len(d.chunk) - d.cp + d.Buffered() }

// TooLong returns how many over-long lines were rejected so far.
func (d *Decoder) TooLong() uint64 { return d.tooLong }

// LastTooLong returns up to the first 32 bytes of the most recently rejected
// over-long line, for a log message (quote it: it is raw peer input). The
// slice is valid until the next call to Next.
func (d *Decoder) LastTooLong() []byte { return d.snip[:d.snipN] }

// Release returns the decoder's scratch buffer to the pool and forgets the
// current chunk and partial line. The counters are kept. The decoder may be
// used again afterwards, as if new; frames returned earlier are invalid.
func (d *Decoder) Release() {
	ReleaseBuf(d.own)
	d.own = nil
	d.op = 0
	d.clean = 0
	d.chunk = nil
	d.cp = 0
	d.discarding = false
}

// scratchCap reports the capacity of the scratch buffer (for tests).
func (d *Decoder) scratchCap() int { return cap(d.own) }
