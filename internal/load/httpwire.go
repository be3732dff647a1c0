package load

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/framing"
)

// Errors of the HTTP/1.1 response parser.
var (
	errBadResponse = errors.New("load: malformed HTTP response")
	errBadChunk    = errors.New("load: malformed chunked body")
	errLineTooLong = errors.New("load: HTTP header line too long")
	errBodyTooBig  = errors.New("load: response body too large")
	// errNeedMore: a push-mode bufReader has no more bytes for now (see
	// bufReader.push); never returned by a pull-mode one.
	errNeedMore = errors.New("load: response incomplete")
)

// maxBody bounds a JSON body gathered into scratch memory.
const maxBody = 64 << 20

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n.Add(int64(n))
	}
	return n, err
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if n > 0 {
		c.n.Add(int64(n))
	}
	return n, err
}

// bufReader is a read buffer over a connection. Slices it returns alias the
// buffer and stay valid until the next call that reads (fill may move the
// unread bytes to the front).
//
// In push mode (a connection read by a poller, see httppoll_linux.go) the
// bufReader never reads: the poller reads into buf[w:] and sets err at the
// end of the stream, and fill reports errNeedMore instead of reading, so a
// parse that runs out of bytes stops and is resumed when more arrive.
type bufReader struct {
	rd   io.Reader
	buf  []byte // len == cap
	r, w int
	err  error // sticky read error, reported once the buffer is drained
	read int64 // bytes read from rd since reset (a response started arriving)
	push bool
}

func (b *bufReader) reset(rd io.Reader, buf []byte) {
	b.rd, b.buf, b.r, b.w, b.err, b.read = rd, buf[:cap(buf)], 0, 0, nil, 0
}

// fill reads more bytes, moving the unread ones to the front when the
// buffer's tail is full. It fails only when no new byte arrived.
func (b *bufReader) fill() error {
	if b.err != nil {
		return b.err
	}
	if b.push {
		return errNeedMore
	}
	if b.w == len(b.buf) {
		if b.r == 0 {
			return errLineTooLong
		}
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	for range 100 {
		n, err := b.rd.Read(b.buf[b.w:])
		b.w += n
		b.read += int64(n)
		if err != nil {
			b.err = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	b.err = io.ErrNoProgress
	return b.err
}

// line returns the next line without its "\n" and a "\r" before it.
func (b *bufReader) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(b.buf[b.r:b.w], '\n'); i >= 0 {
			l := b.buf[b.r : b.r+i]
			b.r += i + 1
			if n := len(l); n > 0 && l[n-1] == '\r' {
				l = l[:n-1]
			}
			return l, nil
		}
		if err := b.fill(); err != nil {
			return nil, eofUnexpected(err)
		}
	}
}

// room makes space at the end of a push-mode buffer before the poller reads
// into it: the unread bytes move to the front, or, when they fill the
// whole buffer (a response head or a chunk line longer than it), the
// buffer doubles, up to framing.TopClass. It fails only past that size.
func (b *bufReader) room() error {
	if b.r == b.w {
		b.r, b.w = 0, 0
		return nil
	}
	if b.w < len(b.buf) {
		return nil
	}
	if b.r > 0 {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
		return nil
	}
	if len(b.buf) >= framing.TopClass {
		return errLineTooLong
	}
	nb := framing.AcquireBuf(2 * len(b.buf))
	nb = nb[:cap(nb)]
	copy(nb, b.buf[:b.w])
	framing.ReleaseBuf(b.buf)
	b.buf = nb
	return nil
}

// eofUnexpected turns io.EOF inside a message into io.ErrUnexpectedEOF.
func eofUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// respHead is what the status line and headers of a response say.
type respHead struct {
	status  int
	length  int64 // Content-Length, -1 when absent
	chunked bool
	sse     bool // Content-Type: text/event-stream
	close   bool // Connection: close, or HTTP/1.0
	noBody  bool // 204, 304
}

// readHead reads a status line and headers, skipping interim 1xx
// responses.
func (b *bufReader) readHead(h *respHead) error {
	for {
		*h = respHead{length: -1}
		line, err := b.line()
		if err != nil {
			return err
		}
		// "HTTP/1.1 200 OK" (the reason phrase may be empty).
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
			(len(line) > 12 && line[12] != ' ') {
			return errBadResponse
		}
		st := 0
		for _, c := range line[9:12] {
			if c < '0' || c > '9' {
				return errBadResponse
			}
			st = st*10 + int(c-'0')
		}
		h.status = st
		h.close = line[7] == '0'
		for {
			line, err := b.line()
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return errBadResponse
			}
			name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
			switch {
			case len(name) == 14 && bytes.EqualFold(name, []byte("Content-Length")):
				n, ok := parseInt(val)
				if !ok || n < 0 || (h.length >= 0 && h.length != n) {
					return errBadResponse
				}
				h.length = n
			case len(name) == 17 && bytes.EqualFold(name, []byte("Transfer-Encoding")):
				// chunked must be the last coding (RFC 9112 §6.3).
				i := bytes.LastIndexByte(val, ',')
				last := bytes.TrimSpace(val[i+1:])
				h.chunked = bytes.EqualFold(last, []byte("chunked"))
				if !h.chunked {
					h.close = true // read to EOF
				}
			case len(name) == 12 && bytes.EqualFold(name, []byte("Content-Type")):
				const es = "text/event-stream"
				h.sse = len(val) >= len(es) && bytes.EqualFold(val[:len(es)], []byte(es)) &&
					(len(val) == len(es) || val[len(es)] == ';' || val[len(es)] == ' ')
			case len(name) == 10 && bytes.EqualFold(name, []byte("Connection")):
				if containsTokenFold(val, "close") {
					h.close = true
				} else if containsTokenFold(val, "keep-alive") && line[7] == '0' {
					h.close = false
				}
			}
		}
		if h.status >= 100 && h.status < 200 && h.status != 101 {
			continue // interim response: the real one follows
		}
		if h.status == 204 || h.status == 304 || h.status == 101 {
			h.noBody = true
		}
		return nil
	}
}

// containsTokenFold reports whether the comma-separated list v holds tok.
func containsTokenFold(v []byte, tok string) bool {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		var part []byte
		if i < 0 {
			part, v = v, nil
		} else {
			part, v = v[:i], v[i+1:]
		}
		if bytes.EqualFold(bytes.TrimSpace(part), []byte(tok)) {
			return true
		}
	}
	return false
}

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

// bodyReader yields the body of one response in segments that alias the
// bufReader (zero copy); a segment is valid until the next call to next.
type bodyReader struct {
	b      *bufReader
	mode   uint8
	state  uint8
	remain int64
	acc    int // readAll: bytes gathered into scratch so far (push mode resumes there)
}

func (r *bodyReader) reset(b *bufReader, h *respHead) {
	r.b, r.state, r.remain, r.acc = b, chunkSize, 0, 0
	switch {
	case h.noBody:
		r.mode = bodyNone
	case h.chunked:
		r.mode = bodyChunked
	case h.length >= 0:
		r.mode, r.remain = bodyLength, h.length
	default:
		r.mode = bodyEOF
	}
}

// reusable reports whether the connection can carry another request once
// this body is read.
func (r *bodyReader) reusable() bool { return r.mode != bodyEOF }

// next returns the next non-empty segment of the body, or io.EOF at its
// end.
func (r *bodyReader) next() ([]byte, error) {
	b := r.b
	switch r.mode {
	case bodyNone:
		return nil, io.EOF
	case bodyLength:
		if r.remain == 0 {
			return nil, io.EOF
		}
		if b.r == b.w {
			if err := b.fill(); err != nil {
				return nil, eofUnexpected(err)
			}
		}
		n := min(int64(b.w-b.r), r.remain)
		seg := b.buf[b.r : b.r+int(n)]
		b.r += int(n)
		r.remain -= n
		return seg, nil
	case bodyEOF:
		if b.r == b.w {
			if err := b.fill(); err != nil {
				return nil, err // io.EOF ends the body
			}
		}
		seg := b.buf[b.r:b.w]
		b.r = b.w
		return seg, nil
	}
	for {
		switch r.state {
		case chunkSize:
			line, err := b.line()
			if err != nil {
				return nil, err
			}
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i] // chunk extensions are ignored
			}
			n, ok := parseHex(bytes.TrimRight(line, " \t"))
			if !ok {
				return nil, errBadChunk
			}
			if n == 0 {
				r.state = chunkTrailer
				continue
			}
			r.remain, r.state = n, chunkData
		case chunkData:
			if b.r == b.w {
				if err := b.fill(); err != nil {
					return nil, eofUnexpected(err)
				}
			}
			n := min(int64(b.w-b.r), r.remain)
			seg := b.buf[b.r : b.r+int(n)]
			b.r += int(n)
			r.remain -= n
			if r.remain == 0 {
				r.state = chunkCRLF
			}
			return seg, nil
		case chunkCRLF:
			line, err := b.line()
			if err != nil {
				return nil, err
			}
			if len(line) != 0 {
				return nil, errBadChunk
			}
			r.state = chunkSize
		case chunkTrailer:
			line, err := b.line()
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

// readAll returns the whole body. A Content-Length body that fits the
// read buffer is returned in place; anything else is gathered into
// *scratch. In push mode it returns errNeedMore when the body is not all
// there yet; calling it again resumes where it stopped.
func (r *bodyReader) readAll(scratch *[]byte) ([]byte, error) {
	b := r.b
	if r.mode == bodyLength && r.acc == 0 && r.remain <= int64(len(b.buf)) {
		n := int(r.remain)
		for b.w-b.r < n {
			if b.r > 0 && len(b.buf)-b.r < n {
				b.w = copy(b.buf, b.buf[b.r:b.w])
				b.r = 0
			}
			if err := b.fill(); err != nil {
				return nil, eofUnexpected(err)
			}
		}
		body := b.buf[b.r : b.r+n]
		b.r += n
		r.remain = 0
		return body, nil
	}
	out := (*scratch)[:r.acc]
	for {
		seg, err := r.next()
		if err == io.EOF {
			*scratch = out
			return out, nil
		}
		if err != nil {
			*scratch = out
			r.acc = len(out)
			return nil, err
		}
		if len(out)+len(seg) > maxBody {
			return nil, errBodyTooBig
		}
		out = append(out, seg...)
	}
}

// sseParser splits a text/event-stream into events incrementally. Input
// arrives in segments of any size (push), events come out of next. Lines
// end in CRLF, LF or CR; "data" lines accumulate (joined by "\n"), comment
// lines (":") and "id"/"retry" fields are ignored, an event whose type is
// neither empty nor "message" is dropped, a leading BOM is skipped.
type sseParser struct {
	in      []byte // unconsumed part of the current segment
	line    []byte // a line split across segments
	data    []byte // data buffer of the event being built
	hasData bool
	other   bool // event type is not "message"
	skipLF  bool // the previous segment ended in '\r'
	started bool
}

func (p *sseParser) reset() {
	p.in, p.line, p.data = nil, p.line[:0], p.data[:0]
	p.hasData, p.other, p.skipLF, p.started = false, false, false, false
}

// push hands the parser the next segment; call next until it reports
// false before pushing again.
func (p *sseParser) push(seg []byte) { p.in = seg }

// next returns the data of the next complete event. The slice is valid
// until the following call.
func (p *sseParser) next() ([]byte, bool) {
	for len(p.in) > 0 {
		in := p.in
		if p.skipLF {
			p.skipLF = false
			if in[0] == '\n' {
				p.in = in[1:]
				continue
			}
		}
		lf := bytes.IndexByte(in, '\n')
		lim := lf
		if lim < 0 {
			lim = len(in)
		}
		end := bytes.IndexByte(in[:lim], '\r')
		if end < 0 {
			end = lf
		}
		if end < 0 {
			p.line = append(p.line, in...)
			p.in = nil
			return nil, false
		}
		line := in[:end]
		if len(p.line) > 0 {
			p.line = append(p.line, line...)
			line = p.line
		}
		next := end + 1
		if in[end] == '\r' {
			if next < len(in) {
				if in[next] == '\n' {
					next++
				}
			} else {
				p.skipLF = true
			}
		}
		p.in = in[next:]
		data, ok := p.processLine(line)
		p.line = p.line[:0]
		if ok {
			return data, true
		}
	}
	return nil, false
}

func (p *sseParser) processLine(line []byte) ([]byte, bool) {
	if !p.started {
		p.started = true
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	if len(line) == 0 {
		// Dispatch.
		ok := p.hasData && !p.other
		p.hasData, p.other = false, false
		if !ok {
			return nil, false
		}
		d := p.data
		if n := len(d); n > 0 && d[n-1] == '\n' {
			d = d[:n-1]
		}
		return d, true
	}
	if line[0] == ':' {
		return nil, false // comment (keep-alive, SSE-05)
	}
	field, val := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, val = line[:i], line[i+1:]
		if len(val) > 0 && val[0] == ' ' {
			val = val[1:]
		}
	}
	switch string(field) {
	case "data":
		if !p.hasData {
			p.data = p.data[:0]
			p.hasData = true
		}
		p.data = append(p.data, val...)
		p.data = append(p.data, '\n')
	case "event":
		p.other = len(val) > 0 && string(val) != "message"
	}
	return nil, false
}
