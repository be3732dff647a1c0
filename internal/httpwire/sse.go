package httpwire

import "bytes"

// SSEParser splits a text/event-stream into events incrementally. Input
// arrives in segments of any size (Push), events come out of Next. Lines
// end in CRLF, LF or CR; "data" lines accumulate (joined by "\n"), comment
// lines (":") and "id"/"retry" fields are ignored, a leading BOM is
// skipped. An event whose type is neither empty nor "message" is dropped
// unless Types is set.
type SSEParser struct {
	// Types makes Next return events of every type; Event then names the
	// type of the last one (the HTTP+SSE transport's "endpoint" event).
	Types bool

	in      []byte // unconsumed part of the current segment
	line    []byte // a line split across segments
	data    []byte // data buffer of the event being built
	typ     []byte // Types: event type of the event being built
	last    []byte // Types: event type of the event Next returned last
	hasData bool
	other   bool // event type is not "message"
	skipLF  bool // the previous segment ended in '\r'
	started bool
}

// Reset readies p for a new stream; buffers and Types are kept.
func (p *SSEParser) Reset() {
	p.in, p.line, p.data, p.typ, p.last = nil, p.line[:0], p.data[:0], p.typ[:0], p.last[:0]
	p.hasData, p.other, p.skipLF, p.started = false, false, false, false
}

// Push hands the parser the next segment; call Next until it reports
// false before pushing again. The parser reads the segment in place until
// then.
func (p *SSEParser) Push(seg []byte) { p.in = seg }

// Pending reports the bytes held for the event being built (its data so
// far and a partial line). Callers bound it after each segment: it grows
// by at most one segment between two checks.
func (p *SSEParser) Pending() int {
	n := len(p.line)
	if p.hasData {
		n += len(p.data)
	}
	return n
}

// Event returns the type of the event Next returned last ("message" when
// it named none), with Types set. The slice is valid until the next call
// to Next.
func (p *SSEParser) Event() []byte {
	if len(p.last) == 0 {
		return []byte("message")
	}
	return p.last
}

// Next returns the data of the next complete event. The slice is valid
// until the following call.
func (p *SSEParser) Next() ([]byte, bool) {
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

func (p *SSEParser) processLine(line []byte) ([]byte, bool) {
	if !p.started {
		p.started = true
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	if len(line) == 0 {
		// Dispatch.
		ok := p.hasData && (!p.other || p.Types)
		p.hasData, p.other = false, false
		if p.Types {
			p.last, p.typ = p.typ, p.last[:0]
		}
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
		if p.Types {
			p.typ = append(p.typ[:0], val...)
		}
	}
	return nil, false
}
