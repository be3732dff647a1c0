// Package rawreply is the fixed reply of the raw line-framed ceilings
// (bench/servers/rawtcp, bench/servers/rawgnet): mcpwire's echo reply, with
// the request's id optionally spliced in by a byte search (no JSON parsing),
// so that every raw line server answers byte for byte what mcpwire answers.
package rawreply

import "bytes"

// Line is mcpwire's echo reply to {"text":"hello world"} with id 1 (296
// bytes plus the newline), the same body bench/rawfast answers on HTTP.
const Line = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"structuredContent":{"text":"hello world"},"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpwire-refserver","title":"mcpwire reference server","version":"devel"}}}}` + "\n"

var (
	idKey = []byte(`"id":`)
	// Head and Tail surround the id in Line.
	Head = []byte(Line[:len(`{"jsonrpc":"2.0","id":`)])
	Tail = []byte(Line[len(`{"jsonrpc":"2.0","id":1`):])
)

// ID returns the raw id token of a request line: what follows the first
// `"id":` up to the next ',' or '}'. ok is false when there is none.
func ID(line []byte) (id []byte, ok bool) {
	i := bytes.Index(line, idKey)
	if i < 0 {
		return nil, false
	}
	tok := line[i+len(idKey):]
	end := bytes.IndexAny(tok, ",}")
	if end < 0 {
		return nil, false
	}
	return tok[:end], true
}

// Append appends the reply to request line to dst: Line, or with splice
// Line with the request's id token in place of 1 (Line as is when the
// request has no id token).
func Append(dst, line []byte, splice bool) []byte {
	if splice {
		if id, ok := ID(line); ok {
			dst = append(dst, Head...)
			dst = append(dst, id...)
			return append(dst, Tail...)
		}
	}
	return append(dst, Line...)
}
