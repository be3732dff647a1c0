package httpwire

import (
	"bytes"
	"errors"
	"io"

	"github.com/mcpwire/mcpwire/framing"
)

// Errors of the HTTP/1.1 response parser.
var (
	ErrBadResponse = errors.New("httpwire: malformed HTTP response")
	ErrBadChunk    = errors.New("httpwire: malformed chunked body")
	ErrLineTooLong = errors.New("httpwire: HTTP header line too long")
	ErrBodyTooBig  = errors.New("httpwire: response body too large")
	// ErrNeedMore: a push-mode Reader has no more bytes for now (see
	// Reader.Push); never returned by a pull-mode one.
	ErrNeedMore = errors.New("httpwire: response incomplete")
)

// MaxBody bounds a body gathered by Body.ReadAll.
const MaxBody = 64 << 20

// Reader is a read buffer over a connection. Slices it returns alias the
// buffer and stay valid until the next call that reads (Fill may move the
// unread bytes to the front). The fields are open to a caller that reads
// the connection itself (push mode): it reads into Buf[W:], advances W and
// Got, and sets Err at the end of the stream.
//
// In push mode (Push set: a connection read by a poller) the Reader never
// reads: Fill reports ErrNeedMore instead, so a parse that runs out of
// bytes stops and is resumed when more arrive.
type Reader struct {
	Src  io.Reader
	Buf  []byte // len == cap
	R, W int    // unread bytes are Buf[R:W]
	Err  error  // sticky read error, reported once the buffer is drained
	Got  int64  // bytes read from Src since Reset (a response started arriving)
	Push bool
}

// Reset makes r read src into buf (its whole capacity).
func (r *Reader) Reset(src io.Reader, buf []byte) {
	r.Src, r.Buf, r.R, r.W, r.Err, r.Got = src, buf[:cap(buf)], 0, 0, nil, 0
}

// Buffered reports the number of unread bytes in the buffer.
func (r *Reader) Buffered() int { return r.W - r.R }

// Fill reads more bytes, moving the unread ones to the front when the
// buffer's tail is full. It fails only when no new byte arrived.
func (r *Reader) Fill() error {
	if r.Err != nil {
		return r.Err
	}
	if r.Push {
		return ErrNeedMore
	}
	if r.W == len(r.Buf) {
		if r.R == 0 {
			return ErrLineTooLong
		}
		r.W = copy(r.Buf, r.Buf[r.R:r.W])
		r.R = 0
	}
	for range 100 {
		n, err := r.Src.Read(r.Buf[r.W:])
		r.W += n
		r.Got += int64(n)
		if err != nil {
			r.Err = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	r.Err = io.ErrNoProgress
	return r.Err
}

// Line returns the next line without its "\n" and a "\r" before it.
func (r *Reader) Line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.Buf[r.R:r.W], '\n'); i >= 0 {
			l := r.Buf[r.R : r.R+i]
			r.R += i + 1
			if n := len(l); n > 0 && l[n-1] == '\r' {
				l = l[:n-1]
			}
			return l, nil
		}
		if err := r.Fill(); err != nil {
			return nil, eofUnexpected(err)
		}
	}
}

// Room makes space at the end of a push-mode buffer before the poller reads
// into it: the unread bytes move to the front, or, when they fill the
// whole buffer (a response head or a chunk line longer than it), the
// buffer doubles, up to framing.TopClass (the old one goes back to the
// framing pool). It fails only past that size.
func (r *Reader) Room() error {
	if r.R == r.W {
		r.R, r.W = 0, 0
		return nil
	}
	if r.W < len(r.Buf) {
		return nil
	}
	if r.R > 0 {
		r.W = copy(r.Buf, r.Buf[r.R:r.W])
		r.R = 0
		return nil
	}
	if len(r.Buf) >= framing.TopClass {
		return ErrLineTooLong
	}
	nb := framing.AcquireBuf(2 * len(r.Buf))
	nb = nb[:cap(nb)]
	copy(nb, r.Buf[:r.W])
	framing.ReleaseBuf(r.Buf)
	r.Buf = nb
	return nil
}

// eofUnexpected turns io.EOF inside a message into io.ErrUnexpectedEOF.
func eofUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Head is what the status line and headers of a response say.
type Head struct {
	Status  int
	Length  int64 // Content-Length, -1 when absent
	Chunked bool
	SSE     bool // Content-Type: text/event-stream
	Close   bool // Connection: close, or HTTP/1.0
	NoBody  bool // 204, 304
	// Session is the Mcp-Session-Id header of a 2025-era server ("" when
	// absent; a string is allocated only when the header is there).
	Session string
	// WWWAuthenticate is the WWW-Authenticate header of a 401 or 403
	// reply (several fields joined by ", "); it is not kept for other
	// statuses.
	WWWAuthenticate string
	// DPoPNonce is the DPoP-Nonce header of a 401 or 403 reply (RFC 9449
	// §9).
	DPoPNonce string
}

// ReadHead reads a status line and headers, skipping interim 1xx
// responses.
func (r *Reader) ReadHead(h *Head) error {
	for {
		*h = Head{Length: -1}
		line, err := r.Line()
		if err != nil {
			return err
		}
		// "HTTP/1.1 200 OK" (the reason phrase may be empty).
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' ||
			(len(line) > 12 && line[12] != ' ') {
			return ErrBadResponse
		}
		st := 0
		for _, c := range line[9:12] {
			if c < '0' || c > '9' {
				return ErrBadResponse
			}
			st = st*10 + int(c-'0')
		}
		h.Status = st
		http10 := line[7] == '0'
		h.Close = http10
		for {
			line, err := r.Line()
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return ErrBadResponse
			}
			name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
			switch {
			case len(name) == 14 && bytes.EqualFold(name, []byte("Content-Length")):
				n, ok := parseDecimal(val)
				if !ok || (h.Length >= 0 && h.Length != n) {
					return ErrBadResponse
				}
				h.Length = n
			case len(name) == 17 && bytes.EqualFold(name, []byte("Transfer-Encoding")):
				// chunked must be the last coding (RFC 9112 §6.3).
				i := bytes.LastIndexByte(val, ',')
				last := bytes.TrimSpace(val[i+1:])
				h.Chunked = bytes.EqualFold(last, []byte("chunked"))
				if !h.Chunked {
					h.Close = true // read to EOF
				}
			case len(name) == 12 && bytes.EqualFold(name, []byte("Content-Type")):
				const es = "text/event-stream"
				h.SSE = len(val) >= len(es) && bytes.EqualFold(val[:len(es)], []byte(es)) &&
					(len(val) == len(es) || val[len(es)] == ';' || val[len(es)] == ' ')
			case len(name) == 10 && bytes.EqualFold(name, []byte("Connection")):
				if containsTokenFold(val, "close") {
					h.Close = true
				} else if http10 && containsTokenFold(val, "keep-alive") {
					h.Close = false
				}
			case len(name) == 14 && bytes.EqualFold(name, []byte("Mcp-Session-Id")):
				h.Session = string(val)
			case len(name) == 16 && (st == 401 || st == 403) && bytes.EqualFold(name, []byte("WWW-Authenticate")):
				if h.WWWAuthenticate != "" {
					h.WWWAuthenticate += ", "
				}
				h.WWWAuthenticate += string(val)
			case len(name) == 10 && (st == 401 || st == 403) && bytes.EqualFold(name, []byte("DPoP-Nonce")):
				h.DPoPNonce = string(val)
			}
		}
		if h.Status >= 100 && h.Status < 200 && h.Status != 101 {
			continue // interim response: the real one follows
		}
		if h.Status == 204 || h.Status == 304 || h.Status == 101 {
			h.NoBody = true
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

// parseDecimal parses a Content-Length value (1*DIGIT, at most 18 digits)
// without allocating.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
