package load

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/mcpwire/mcpwire/codec"
)

// ProtocolVersion is the MCP revision every request claims.
const ProtocolVersion = "2026-07-28"

// metaOpen is params._meta without its closing brace, so a progressToken
// can follow: the required protocolVersion and clientCapabilities (META-02)
// plus clientInfo, which clients SHOULD send on every request.
const metaOpen = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ProtocolVersion + `",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"mcpwire-load","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}`

// reqTemplate is one prebuilt request. The body is stored in pieces with
// an id between consecutive pieces (the JSON-RPC id, and for progress the
// progressToken too), so sending a request copies bytes and formats one
// integer; nothing is encoded per request.
type reqTemplate struct {
	method string
	isCall bool     // tools/call: a result with isError true counts as "tool_error"
	parts  [][]byte // body pieces, an id between each two
	fixed  int      // total length of parts
	// seqGap, when > 0, is the gap before parts[seqGap]: it takes the
	// publish sequence number instead of the id (listen, unique URIs).
	seqGap int
	head   []byte // HTTP: request line and headers up to "Content-Length: "
}

// newTemplate builds `{"jsonrpc":"2.0","id":ID,"method":M,"params":{P _meta}}`
// where P is params (members with a trailing comma, or empty) and _meta
// carries progressToken ID when progress is set.
func newTemplate(method string, params []byte, progress bool) *reqTemplate {
	var pre []byte
	pre = append(pre, `,"method":`...)
	pre = codec.AppendString(pre, method)
	pre = append(pre, `,"params":{`...)
	pre = append(pre, params...)
	pre = append(pre, metaOpen...)
	t := &reqTemplate{method: method, isCall: method == "tools/call"}
	t.parts = append(t.parts, []byte(`{"jsonrpc":"2.0","id":`))
	if progress {
		pre = append(pre, `,"progressToken":`...)
		t.parts = append(t.parts, pre, []byte(`}}}`))
	} else {
		pre = append(pre, `}}}`...)
		t.parts = append(t.parts, pre)
	}
	for _, p := range t.parts {
		t.fixed += len(p)
	}
	return t
}

// RequestBody returns the JSON-RPC message the run described by cfg sends
// first, with id as its id (and progressToken, when the workload carries
// one): the fixture itself, for driving a server with another client
// (bench/cmd/compare hands it to tsung). cfg.Target must be valid.
func RequestBody(cfg Config, id int64) ([]byte, error) {
	if _, err := cfg.normalize(); err != nil {
		return nil, err
	}
	r := &run{cfg: cfg}
	if err := r.buildTemplates(); err != nil {
		return nil, err
	}
	return r.tpls[0].appendBody(nil, strconv.AppendInt(nil, id, 10)), nil
}

// callParams is `"name":TOOL,"arguments":ARGS,`.
func callParams(tool string, args []byte) []byte {
	b := append([]byte(`"name":`), codec.AppendString(nil, tool)...)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	return append(b, ',')
}

// maxRequestLen is the longest line a stream connection of the run can
// send (an id and a sequence number of 19 digits each, the newline).
func (r *run) maxRequestLen() int {
	n := 0
	for _, t := range r.tpls {
		n = max(n, t.bodyLen(19, 19)+1)
	}
	return n
}

// seqMark stands for the sequence gap while a template is built.
const seqMark = "\x00seq\x00"

// withSeq splits the part holding seqMark, so that the publish sequence
// number is spliced there (a touch's unique URI).
func (t *reqTemplate) withSeq() *reqTemplate {
	for i, p := range t.parts {
		if a, b, ok := bytes.Cut(p, []byte(seqMark)); ok {
			t.parts = slices.Insert(t.parts, i+1, b)
			t.parts[i] = a
			t.seqGap = i + 1
			t.fixed -= len(seqMark)
			return t
		}
	}
	return t
}

// bodyLen is the body length for an id of idLen digits (and a sequence
// number of seqLen).
func (t *reqTemplate) bodyLen(idLen, seqLen int) int {
	if t.seqGap > 0 {
		return t.fixed + (len(t.parts)-2)*idLen + seqLen
	}
	return t.fixed + (len(t.parts)-1)*idLen
}

// appendBody appends the body with id spliced in.
func (t *reqTemplate) appendBody(dst, id []byte) []byte { return t.appendBodySeq(dst, id, id) }

// appendBodySeq appends the body with id spliced in, and seq at the
// sequence gap if the template has one.
func (t *reqTemplate) appendBodySeq(dst, id, seq []byte) []byte {
	dst = append(dst, t.parts[0]...)
	for i, p := range t.parts[1:] {
		if i+1 == t.seqGap {
			dst = append(dst, seq...)
		} else {
			dst = append(dst, id...)
		}
		dst = append(dst, p...)
	}
	return dst
}

// appendHTTP appends the whole HTTP request for id.
func (t *reqTemplate) appendHTTP(dst, id []byte) []byte { return t.appendHTTPSeq(dst, id, id) }

// appendHTTPSeq appends the whole HTTP request for id and sequence seq.
func (t *reqTemplate) appendHTTPSeq(dst, id, seq []byte) []byte {
	dst = append(dst, t.head...)
	dst = strconv.AppendInt(dst, int64(t.bodyLen(len(id), len(seq))), 10)
	dst = append(dst, "\r\n\r\n"...)
	return t.appendBodySeq(dst, id, seq)
}

// seqURI is the JSON string prefix of a unique-URI touch's uri: the
// subscribed URI and a slash, without the closing quote.
func seqURI(uri string) []byte {
	b := codec.AppendString(nil, uri+"/")
	return b[:len(b)-1]
}

// parseSeqURI returns k from the raw JSON string `prefix` + k + `"`.
func parseSeqURI(raw, prefix []byte) (int64, bool) {
	if len(raw) < len(prefix)+2 || !bytes.HasPrefix(raw, prefix) || raw[len(raw)-1] != '"' {
		return 0, false
	}
	return parseInt(raw[len(prefix) : len(raw)-1])
}

// header is one extra request header.
type header struct{ name, value string }

// httpHead builds the request line and headers of a POST for method, up to
// and including "Content-Length: " (HTTP-03, HTTP-04, HDR-01..05).
func httpHead(t *target, method string, name *string, extra []header) []byte {
	var b []byte
	b = append(b, "POST "+t.path+" HTTP/1.1\r\nHost: "+t.host+"\r\n"...)
	b = append(b, "User-Agent: mcpwire-load\r\n"...)
	b = append(b, "Content-Type: application/json\r\n"...)
	b = append(b, "Accept: application/json, text/event-stream\r\n"...)
	b = append(b, "MCP-Protocol-Version: "+ProtocolVersion+"\r\n"...)
	b = append(b, "Mcp-Method: "+method+"\r\n"...)
	if name != nil {
		b = append(b, "Mcp-Name: "...)
		b = codec.AppendHeaderValue(b, []byte(*name))
		b = append(b, "\r\n"...)
	}
	for _, h := range extra {
		b = append(b, h.name+": "+h.value+"\r\n"...)
	}
	return append(b, "Content-Length: "...)
}

// fullHTTP is a complete request (head, length, body) for a fixed body.
func fullHTTP(head, body []byte) []byte {
	b := append([]byte(nil), head...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// listenBody is a subscriptions/listen request with the string id
// "listen-K" subscribed to uri (SUB-01).
func listenBody(k int, uri string) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":"listen-`)
	b = strconv.AppendInt(b, int64(k), 10)
	b = append(b, `","method":"subscriptions/listen","params":{`...)
	b = append(b, metaOpen...)
	b = append(b, `},"notifications":{"resourceSubscriptions":[`...)
	b = codec.AppendString(b, uri)
	return append(b, `]}}}`...)
}

// listenIndex parses the raw JSON id `"listen-K"` back into K.
func listenIndex(raw []byte) (int, bool) {
	const p = `"listen-`
	if len(raw) < len(p)+2 || string(raw[:len(p)]) != p || raw[len(raw)-1] != '"' {
		return 0, false
	}
	n, ok := parseInt(raw[len(p) : len(raw)-1])
	if !ok || n < 0 || n > 1<<31 {
		return 0, false
	}
	return int(n), true
}

// cancelledPrefix and cancelledSuffix frame notifications/cancelled for an
// integer or raw id (STD-10, SUB-09).
var (
	cancelledPrefix = []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
	cancelledSuffix = []byte(`}}`)
)

// parseInt parses a JSON integer token without allocating (at most 18
// digits, optional '-').
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
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
	if neg {
		n = -n
	}
	return n, true
}
