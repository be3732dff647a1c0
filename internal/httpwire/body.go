package httpwire

import (
	"bytes"
	"io"
)

// Body framings.
const (
	bodyNone = iota
	bodyLength
	bodyChunked
	bodyEOF
)

// Chunked decoder states.
const (
	chunkSize = iota
	chunkData
	chunkCRLF
	chunkTrailer
	chunkDone
)

// Body yields the body of one response in segments that alias the Reader
// (zero copy); a segment is valid until the next call to Next.
type Body struct {
	b      *Reader
	mode   uint8
	state  uint8
	remain int64
	acc    int // ReadAll: bytes gathered into scratch so far (push mode resumes there)
}

// Reset starts reading the body that h announces from b.
func (r *Body) Reset(b *Reader, h *Head) {
	r.b, r.state, r.remain, r.acc = b, chunkSize, 0, 0
	switch {
	case h.NoBody:
		r.mode = bodyNone
	case h.Chunked:
		r.mode = bodyChunked
	case h.Length >= 0:
		r.mode, r.remain = bodyLength, h.Length
	default:
		r.mode = bodyEOF
	}
}

// Reusable reports whether the connection can carry another request once
// this body is read.
func (r *Body) Reusable() bool { return r.mode != bodyEOF }

// Next returns the next non-empty segment of the body, or io.EOF at its
// end.
func (r *Body) Next() ([]byte, error) {
	b := r.b
	switch r.mode {
	case bodyNone:
		return nil, io.EOF
	case bodyLength:
		if r.remain == 0 {
			return nil, io.EOF
		}
		if b.R == b.W {
			if err := b.Fill(); err != nil {
				return nil, eofUnexpected(err)
			}
		}
		n := min(int64(b.W-b.R), r.remain)
		seg := b.Buf[b.R : b.R+int(n)]
		b.R += int(n)
		r.remain -= n
		return seg, nil
	case bodyEOF:
		if b.R == b.W {
			if err := b.Fill(); err != nil {
				return nil, err // io.EOF ends the body
			}
		}
		seg := b.Buf[b.R:b.W]
		b.R = b.W
		return seg, nil
	}
	for {
		switch r.state {
		case chunkSize:
			line, err := b.Line()
			if err != nil {
				return nil, err
			}
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i] // chunk extensions are ignored
			}
			n, ok := parseHex(bytes.TrimRight(line, " \t"))
			if !ok {
				return nil, ErrBadChunk
			}
			if n == 0 {
				r.state = chunkTrailer
				continue
			}
			r.remain, r.state = n, chunkData
		case chunkData:
			if b.R == b.W {
				if err := b.Fill(); err != nil {
					return nil, eofUnexpected(err)
				}
			}
			n := min(int64(b.W-b.R), r.remain)
			seg := b.Buf[b.R : b.R+int(n)]
			b.R += int(n)
			r.remain -= n
			if r.remain == 0 {
				r.state = chunkCRLF
			}
			return seg, nil
		case chunkCRLF:
			line, err := b.Line()
			if err != nil {
				return nil, err
			}
			if len(line) != 0 {
				return nil, ErrBadChunk
			}
			r.state = chunkSize
		case chunkTrailer:
			line, err := b.Line()
			if err != nil {
				return nil, err
			}
			if len(line) == 0 {
				r.state = chunkDone
				return nil, io.EOF
			}
		default:
			return nil, io.EOF
		}
	}
}

// parseHex parses a chunk size (at most 15 hex digits).
func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | int64(c)
	}
	return n, true
}

// ReadAll returns the whole body. A Content-Length body that fits the
// read buffer is returned in place (valid until the next read); anything
// else is gathered into *scratch, at most MaxBody bytes. In push mode it
// returns ErrNeedMore when the body is not all there yet; calling it again
// resumes where it stopped.
func (r *Body) ReadAll(scratch *[]byte) ([]byte, error) {
	b := r.b
	if r.mode == bodyLength && r.acc == 0 && r.remain <= int64(len(b.Buf)) {
		n := int(r.remain)
		for b.W-b.R < n {
			if b.R > 0 && len(b.Buf)-b.R < n {
				b.W = copy(b.Buf, b.Buf[b.R:b.W])
				b.R = 0
			}
			if err := b.Fill(); err != nil {
				return nil, eofUnexpected(err)
			}
		}
		body := b.Buf[b.R : b.R+n]
		b.R += n
		r.remain = 0
		return body, nil
	}
	out := (*scratch)[:r.acc]
	for {
		seg, err := r.Next()
		if err == io.EOF {
			*scratch = out
			return out, nil
		}
		if err != nil {
			*scratch = out
			r.acc = len(out)
			return nil, err
		}
		if len(out)+len(seg) > MaxBody {
			return nil, ErrBodyTooBig
		}
		out = append(out, seg...)
	}
}
