package streamhttp

import (
	"bytes"
	"net/http"
	"unsafe"

	"github.com/mcpwire/mcpwire/engine"
)

// The request's headers reach handlers as engine.Headers (Call.Header),
// lent by the exchange: on the fasthttp front end the raw header block,
// aliased while the handler runs on the request's goroutine and copied
// into the exchange's own buffer before a worker may run it after the
// request's goroutine has moved on; on net/http the request's Header map,
// which outlives the handler. Nothing is copied or allocated for a request
// whose handler runs where it was read.

var (
	_ engine.Headers       = (*exchange)(nil)
	_ engine.HeadersLender = (*exchange)(nil)
)

// RequestHeaders implements engine.HeadersLender: the exchange, bound to
// one request at a time, is that request's Headers. Lent on demand rather
// than set with SetHeaders, which would mark every HTTP request as one
// with something for the engine's release to clear.
func (x *exchange) RequestHeaders(*engine.Request) engine.Headers { return x }

// ownHeaders copies the raw header block so that it outlives fasthttp's
// request buffers (a handler on a worker).
func (x *exchange) ownHeaders() {
	if x.hraw == nil {
		return
	}
	x.hbuf = append(x.hbuf[:0], x.hraw...)
	x.hraw = x.hbuf
}

// LookupHeader implements engine.Headers.
func (x *exchange) LookupHeader(name string) ([]byte, bool) {
	if x.nh != nil {
		for k, vs := range x.nh {
			if len(vs) > 0 && foldEqual(bytesOf(k), name) {
				return bytesOf(vs[0]), true
			}
		}
		return nil, false
	}
	for raw := x.hraw; len(raw) > 0; {
		var k, v []byte
		k, v, raw = nextHeader(raw)
		if k != nil && foldEqual(k, name) {
			return v, true
		}
	}
	return nil, false
}

// VisitHeaders implements engine.Headers.
func (x *exchange) VisitHeaders(f func(name, value []byte) bool) {
	if x.nh != nil {
		for k, vs := range x.nh {
			for _, v := range vs {
				if !f(bytesOf(k), bytesOf(v)) {
					return
				}
			}
		}
		return
	}
	for raw := x.hraw; len(raw) > 0; {
		var k, v []byte
		k, v, raw = nextHeader(raw)
		if k != nil && !f(k, v) {
			return
		}
	}
}

// nextHeader splits the first line off a raw header block: its name and
// value (nil name for a line that is not a header field: no colon, an
// empty name, a stray CR) and the rest.
func nextHeader(raw []byte) (name, value, rest []byte) {
	line, rest, _ := bytes.Cut(raw, newline)
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	i := bytes.IndexByte(line, ':')
	if i <= 0 || bytes.IndexByte(line, '\r') >= 0 {
		return nil, nil, rest // not a field (a bare CR never reaches here from fasthttp)
	}
	return trimOWS(line[:i]), trimOWS(line[i+1:]), rest
}

// newline ends a raw header line (a CR before it is the line's).
var newline = []byte{'\n'}

// bytesOf returns s's bytes without a copy: read-only (engine.Headers).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// netHeaders keeps the net/http request's headers for the handler.
func (x *exchange) netHeaders(h http.Header) { x.nh = h }
