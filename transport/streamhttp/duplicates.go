package streamhttp

import (
	"bytes"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
)

// Header fields that a request may carry at most once (F2). Given two
// lines of one of them, parsers disagree on which counts: fasthttp keeps
// the last Content-Type and the last of the lines it reads in a loop,
// net/http hands the first of each name to Header.Get, a proxy in front
// may take either. A check on one value and use of the other is an Origin
// or authorization bypass, so both front ends (and the mounts on them)
// refuse such a request with 400 before anything reads it, counted in
// Stats.DuplicateHeaders. Two Host lines are refused by the HTTP servers
// themselves: by fasthttp while parsing (answered here, with the same body
// and counter) and by net/http before the handler runs (its own 400).
// The mirrored MCP headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name and
// the Mcp-Param-* headers of a tool's bindings) are answered 400 with
// -32020 and the request id once the body is read (B12, mirror.go), and
// counted here too.
type dupHeader uint8

const (
	dupNone dupHeader = iota
	dupOrigin
	dupHost
	dupAuthorization
	dupContentType
)

var dupNames = [...]string{"", "Origin", "Host", "Authorization", "Content-Type"}

func (d dupHeader) String() string { return dupNames[d] }

// dupBodies are the pre-encoded answers, one per field: a JSON-RPC error
// with no id (the body was not read), -32600.
var dupBodies = func() (b [len(dupNames)][]byte) {
	for i := dupOrigin; int(i) < len(dupNames); i++ {
		b[i] = codec.AppendErrorResponse(nil, nil, codec.NewError(codec.CodeInvalidRequest, dupMessage(i.String())))
	}
	return b
}()

func dupMessage(name string) string { return "Bad Request: more than one " + name + " header" }

// refuseDuplicate answers a request that carries a once-only header twice.
func (s *Server) refuseDuplicate(w respWriter, d dupHeader) {
	s.stats.DuplicateHeaders.Add(1)
	w.send(400, ctJSON, dupBodies[d])
}

// rawHeaderLines is the number of lines of a raw header block (fasthttp's
// RawHeaders: every field line, continuation lines included, then the
// empty line that ends the block); 0 for an empty block (a request that
// was not parsed from the wire).
func rawHeaderLines(raw []byte) int {
	if n := bytes.Count(raw, []byte{'\n'}); n > 0 {
		return n - 1
	}
	return 0
}

// scanDuplicates reads a raw header block line by line and reports the
// first once-only field (Origin, Host, Authorization, Content-Type) seen
// twice. Names compare case-insensitively and end at the colon (fasthttp
// refuses a space before it); a line beginning with a space or a tab
// continues the previous field's value (obs-fold, which fasthttp joins)
// and names nothing. Only a line whose first letter may start one of the
// four names is looked at past its end. It allocates nothing.
func scanDuplicates(raw []byte) dupHeader {
	var seen [len(dupNames)]bool
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, newline)
		d := onceOnly(line)
		if d == dupNone {
			continue
		}
		if seen[d] {
			return d
		}
		seen[d] = true
	}
	return dupNone
}

// onceOnly names the once-only field a header line is (any case), or
// dupNone.
func onceOnly(line []byte) dupHeader {
	if len(line) < len("host:") {
		return dupNone
	}
	name := func(n string) bool { return len(line) > len(n) && line[len(n)] == ':' && equalFold(line[:len(n)], n) }
	switch line[0] | 0x20 {
	case 'h':
		if name("host") {
			return dupHost
		}
	case 'o':
		if name("origin") {
			return dupOrigin
		}
	case 'c':
		if name("content-type") {
			return dupContentType
		}
	case 'a':
		if name("authorization") {
			return dupAuthorization
		}
	}
	return dupNone
}

// netDuplicates is the check on a net/http request: net/http gathers the
// lines of one name (canonicalised) under one key.
func netDuplicates(h map[string][]string) dupHeader {
	for _, d := range [...]dupHeader{dupOrigin, dupAuthorization, dupContentType} {
		if len(h[d.String()]) > 1 {
			return d
		}
	}
	return dupNone
}

// isDuplicateHost reports fasthttp's refusal of a second Host line (it has
// no error value of its own; TestDuplicateHeaders pins the text).
func isDuplicateHost(err error) bool {
	return strings.Contains(err.Error(), "too many host headers")
}

// isDuplicateMirrored reports whether a -32020 answer is about a mirrored
// MCP header sent twice (mirror.go).
func isDuplicateMirrored(e *codec.Error) bool {
	return e == errDupVersion || e == errDupMethod || e == errDupName || strings.HasSuffix(e.Message, dupSuffix)
}
