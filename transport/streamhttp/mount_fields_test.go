package streamhttp

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// readByScan is mountFields.read as first written: the raw block scanned
// for a duplicate, then Peek for Origin and Authorization. The reference
// FuzzMountFields holds read to.
func (f *mountFields) readByScan(hdr *fasthttp.RequestHeader) {
	f.dup = scanDuplicates(hdr.RawHeaders())
	if f.dup != dupNone {
		return
	}
	if v := hdr.Peek("Origin"); v != nil {
		f.origin, f.hasOrigin = v, true
	}
	f.auth = hdr.Peek("Authorization")
}

// checkMountFieldLines holds the mountFieldNames fields read found to the
// raw block's lines, read one by one: no line is a continuation (folded),
// and each field has as many lines (up to 2) and the value of its last,
// its name any case up to the first colon, the value without the spaces
// and tabs around it (transport/legacy's scan reads them so).
func checkMountFieldLines(t *testing.T, raw []byte, got *mountFields) {
	t.Helper()
	var vals [4][]byte
	var n [4]uint8
	for _, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			t.Fatalf("raw block %q: a folded line, read exact", raw)
		}
		name, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		for i, want := range mountFieldNames {
			if strings.EqualFold(string(name), want) {
				vals[i] = bytes.Trim(v, " \t")
				n[i] = min(n[i]+1, 2)
			}
		}
	}
	if n != got.n {
		t.Fatalf("raw block %q: lines %v, read %v", raw, n, got.n)
	}
	for i := range vals {
		if !bytes.Equal(vals[i], got.vals[i]) {
			t.Fatalf("raw block %q: %s %q, read %q", raw, mountFieldNames[i], vals[i], got.vals[i])
		}
	}
}

// TestMountFieldNames pins the order a fieldMount's vals follow:
// transport/legacy's fastNames is the same list (its TestFastNamesOrder).
func TestMountFieldNames(t *testing.T) {
	if mountFieldNames != [4]string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept"} {
		t.Fatalf("mountFieldNames %q", mountFieldNames)
	}
}

// fuzzWire is a POST to path for the header fuzz targets
// (FuzzDuplicateHeaders, FuzzMountFields): block is the header lines,
// framing picks the protocol (framing/3%2) and how the body is framed
// (framing%3), trailer the chunked body's trailer fields;
// FuzzMountFields also reads framing/6%2 (names as sent, not
// canonicalised).
func fuzzWire(path string, block []byte, framing byte, trailer []byte) []byte {
	proto := "HTTP/1.1"
	if framing/3%2 == 1 {
		proto = "HTTP/1.0" // Connection: close without a line
	}
	wire := append([]byte("POST "+path+" "+proto+"\r\n"), block...)
	switch framing % 3 {
	case 0: // a body framed by Content-Length
		wire = append(wire, "Content-Length: 2\r\n\r\n{}"...)
	case 1: // none
		wire = append(wire, "\r\n"...)
	case 2: // chunked, with trailer fields
		wire = append(append(append(wire, "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"...), trailer...), "\r\n"...)
	}
	return wire
}

// FuzzMountFields (F2, SEC-01): whatever header block fasthttp accepts, a
// mount's reading of it from fasthttp's fields (read) is the one from the
// raw block and Peek (readByScan): the same duplicate named and, when
// there is none, the same Origin (and whether there is one, a nil value
// being none) and the same Authorization. When read finds the fields one
// for one with the lines (exact), the mountFieldNames it hands a
// fieldMount are those of the raw lines (checkMountFieldLines); when not,
// it hands none. Each side reads its own parse of the same bytes (All
// moves the Cookie fields, Peek reuses a buffer).
func FuzzMountFields(f *testing.F) {
	for _, s := range []string{
		"Host: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
		"Host: a\r\nOrigin: http://evil.example\r\nOrigin: http://127.0.0.1:8080\r\n",
		"Host: a\r\nOrigin: http://127.0.0.1\r\nAuthorization: Bearer a\r\n",
		"Host: a\r\nOrigin:\r\nAuthorization:\r\n",
		"Authorization: Bearer a\r\nAUTHORIZATION: Bearer b\r\n",
		"Origin: a\r\nOrigin: b\r\nAuthorization: a\r\nAuthorization: b\r\n",
		"Authorization: a\r\nOrigin: a\r\nAuthorization: b\r\nOrigin: b\r\n",
		"Content-Type: a\r\nOrigin: a\r\nContent-Type: b\r\nOrigin: b\r\n",
		"Origin: a\r\nContent-Type: a\r\nOrigin: b\r\nContent-Type: b\r\n",
		"Connection: close\r\nContent-Type: a\r\nContent-Type: b\r\n",
		"Connection: keep-alive\r\nContent-Type: a\r\nContent-Type: b\r\n",
		"Content-Type: a\r\nContent-Type: b\r\n",
		"Transfer-Encoding: identity\r\nContent-Type: a\r\nContent-Type: b\r\n",
		"Transfer-Encoding: identity\r\nOrigin: a\r\n",
		"Cookie: a=1\r\nCookie: b=2\r\nContent-Type: a\r\n",
		"Cookie: a=1\r\nOrigin: a\r\nCookie: b=2\r\n",
		"X-A: a\r\n Content-Type: folded\r\nContent-Type: b\r\n",
		"Origin: a\r\n b\r\nAuthorization: x\r\n",
		"Content-Type:\r\nContent-Type: b\r\n",
		"User-Agent: a\r\nUser-Agent: b\r\nHost: a\r\n",
		"Trailer: Origin\r\nOrigin: a\r\n",
		"Origin x: a\r\norigin: b\r\n",
		"origin: a\r\nOrigin: b\r\n",
		"Host: a\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: abc\r\n",
		"mcp-session-id:  a \t\r\nMCP-SESSION-ID: b\r\nmcp-protocol-version:\r\naccept: x\r\nACCEPT: y\r\n",
		"Mcp-Session-Id: a\r\n b\r\nContent-Type: application/json\r\n",
		"Mcp-Session-Id x: a\r\nMcp-Session-Idx: b\r\nMcp-Session-I: c\r\n",
		"Mcp-Session-Id: a\r\nMcp-Session-Id: b\r\nMcp-Session-Id: c\r\n",
	} {
		for framing := range byte(12) {
			f.Add([]byte(s), framing, []byte("Origin: t\r\nAuthorization: t\r\n"))
		}
	}
	f.Fuzz(func(t *testing.T, block []byte, framing byte, trailer []byte) {
		wire := fuzzWire("/mount", block, framing, trailer)
		var a, b fasthttp.Request
		if framing/6%2 == 1 { // names as sent (Read keeps the setting)
			a.Header.DisableNormalizing()
			b.Header.DisableNormalizing()
		}
		if err := a.Read(bufio.NewReader(bytes.NewReader(wire))); err != nil {
			return
		}
		if err := b.Read(bufio.NewReader(bytes.NewReader(wire))); err != nil {
			t.Fatalf("parsed once, not twice: %v", err)
		}
		var got, want mountFields
		got.read(&a.Header, a.Body())
		want.readByScan(&b.Header)
		if got.exact {
			checkMountFieldLines(t, a.Header.RawHeaders(), &got)
		} else if got.vals[0] != nil || got.vals[1] != nil || got.vals[2] != nil || got.vals[3] != nil || got.n != [4]uint8{} {
			t.Fatalf("raw block %q (framing %d): not exact, yet fields %q %v", a.Header.RawHeaders(), framing, got.vals, got.n)
		}
		// With a duplicate the request is refused: nothing else is read.
		if got.dup != want.dup || got.dup == dupNone && (got.hasOrigin != want.hasOrigin || !bytes.Equal(got.origin, want.origin) ||
			!bytes.Equal(got.auth, want.auth) || (got.auth == nil) != (want.auth == nil)) {
			t.Fatalf("raw block %q (framing %d): read %+v, by scan %+v", a.Header.RawHeaders(), framing, got, want)
		}
	})
}
