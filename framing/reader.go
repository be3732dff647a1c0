package framing

import "io"

// maxEmptyReads is how many (0, nil) results from the io.Reader in a row
// Reader tolerates before it reports io.ErrNoProgress.
const maxEmptyReads = 100

// Reader is a pull framer for newline-delimited frames over an io.Reader
// (stdio, TCP, Unix sockets). It reads into one pooled buffer of ReadSize
// bytes and hands out frames that alias it; only a line split across two
// reads is copied, into a scratch buffer. Memory therefore stays at one read
// buffer plus at most MaxLine+1 bytes of scratch, whatever the peer sends.
//
// A Reader must not be copied after first use and is not safe for concurrent
// use.
type Reader struct {
	dec   Decoder
	rd    io.Reader
	buf   []byte // read buffer, len == cap once acquired
	size  int
	err   error // first error from rd (or ErrReleased), sticky
	ended bool  // io.EOF seen and passed on to dec.End
}

// NewReader returns a Reader over r applying opt. The read buffer is
// acquired lazily, on the first read.
func NewReader(r io.Reader, opt ReaderConfig) *Reader {
	rd := &Reader{rd: r}
	rd.dec.init(opt)
	rd.size = rd.dec.keep
	return rd
}

// Next returns the next non-blank line without its '\n' and without a '\r'
// right before it. Blank lines (empty, or only ' ', '\t' and '\r') are
// skipped.
//
// The returned slice aliases the Reader's buffers: it is valid only until
// the next call to Next or Release, and the caller must not keep it (copy it
// to keep it).
//
// A line longer than MaxLine makes Next return (nil, ErrLineTooLong) exactly
// once; the rest of that line is read and discarded up to the next '\n'
// without being buffered, and the following call continues with the next
// line. At EOF a final non-blank line without a '\n' is returned as a frame,
// then (nil, io.EOF). Any other error from the io.Reader is returned as is
// (a partial line before it is dropped). Errors are sticky: once Next has
// returned one, it returns the same one again.
func (r *Reader) Next() ([]byte, error) {
	for {
		frame, err := r.dec.Next()
		if frame != nil || err != nil {
			return frame, err
		}
		if r.err != nil {
			if r.err == io.EOF && !r.ended {
				r.ended = true
				r.dec.End()
				continue
			}
			return nil, r.err
		}
		r.fill()
	}
}

// fill performs one Read and feeds what it got to the decoder. It is called
// only when the decoder needs more input, so the read buffer is free.
func (r *Reader) fill() {
	if r.buf == nil {
		r.buf = AcquireBuf(r.size)
		r.buf = r.buf[:cap(r.buf)]
	}
	for range maxEmptyReads {
		n, err := r.rd.Read(r.buf)
		if n < 0 || n > len(r.buf) {
			r.err = errBadCount
			return
		}
		if n > 0 {
			r.dec.Feed(r.buf[:n])
		}
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}

// TooLong returns how many over-long lines were rejected so far.
func (r *Reader) TooLong() uint64 { return r.dec.tooLong }

// LastTooLong returns up to the first 32 bytes of the most recently rejected
// over-long line, for a log message (quote it: it is raw peer input). The
// slice is valid until the next call to Next.
func (r *Reader) LastTooLong() []byte { return r.dec.LastTooLong() }

// Buffered returns the number of bytes of a partial line held in scratch.
func (r *Reader) Buffered() int { return r.dec.Buffered() }

// Release returns the Reader's buffers to the pool. The Reader is unusable
// afterwards: Next returns ErrReleased. Frames returned earlier are invalid.
// Release is idempotent. It does not close the io.Reader.
func (r *Reader) Release() {
	r.dec.Release()
	ReleaseBuf(r.buf)
	r.buf = nil
	r.rd = nil
	r.err = ErrReleased
}

// bufCap reports the capacity of the read buffer plus the scratch buffer
// (for tests).
func (r *Reader) bufCap() int { return cap(r.buf) + r.dec.scratchCap() }
