package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	head   []byte   // HTTP: request line and headers up to "Content-Length: "
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

// bodyLen is the body length for an id of idLen digits.
func (t *reqTemplate) bodyLen(idLen int) int { return t.fixed + (len(t.parts)-1)*idLen }

// appendBody appends the body with id spliced in.
func (t *reqTemplate) appendBody(dst, id []byte) []byte {
	dst = append(dst, t.parts[0]...)
	for _, p := range t.parts[1:] {
		dst = append(dst, id...)
		dst = append(dst, p...)
	}
	return dst
}

// appendHTTP appends the whole HTTP request for id.
func (t *reqTemplate) appendHTTP(dst, id []byte) []byte {
	dst = append(dst, t.head...)
	dst = strconv.AppendInt(dst, int64(t.bodyLen(len(id))), 10)
	dst = append(dst, "\r\n\r\n"...)
	return t.appendBody(dst, id)
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

// binding is one x-mcp-header annotation: the value at path inside
// arguments goes into the header Mcp-Param-<name> (PARAM-01..06).
type binding struct {
	name string
	path []string
}

// bindingsOf finds the x-mcp-header annotations of an input schema,
// following "properties" keys only (PARAM-02).
func bindingsOf(schema json.RawMessage) []binding {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []binding
	var walk func(node any, path []string)
	walk = func(node any, path []string) {
		obj, _ := node.(map[string]any)
		props, _ := obj["properties"].(map[string]any)
		for name, p := range props {
			prop, ok := p.(map[string]any)
			if !ok {
				continue
			}
			sub := append(append([]string(nil), path...), name)
			if h, ok := prop["x-mcp-header"].(string); ok && h != "" {
				out = append(out, binding{name: h, path: sub})
			}
			walk(prop, sub)
		}
	}
	walk(root, nil)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// paramHeaders returns the Mcp-Param-* headers for args under bs: strings
// as they are (Base64 sentinel form when needed), integers in decimal,
// booleans as true/false; absent or null values send no header (PARAM-05,
// PARAM-06, B64-01..03).
func paramHeaders(bs []binding, args []byte) ([]header, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	var out []header
	for _, b := range bs {
		var v any = root
		for _, k := range b.path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		var s string
		switch x := v.(type) {
		case nil:
			continue
		case string:
			s = string(codec.AppendHeaderValue(nil, []byte(x)))
		case bool:
			s = strconv.FormatBool(x)
		case json.Number:
			s = x.String()
			if strings.ContainsAny(s, ".eE") {
				if f, err := x.Float64(); err == nil && f == float64(int64(f)) {
					s = strconv.FormatInt(int64(f), 10)
				}
			}
		default:
			return nil, fmt.Errorf("argument %s is annotated x-mcp-header %q but is not a string, integer or boolean", strings.Join(b.path, "."), b.name)
		}
		out = append(out, header{"Mcp-Param-" + b.name, s})
	}
	return out, nil
}

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
