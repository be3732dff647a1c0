package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// maxSafeInt is 2^53-1 (PARAM-02 integer range).
const maxSafeInt = 1<<53 - 1

// errHeaderValue: an annotated argument holds a value the header cannot
// carry (an object, a fraction, an integer beyond ±2^53-1).
var errHeaderValue = errors.New("client: x-mcp-header argument has an unsupported value")

// paramHeaders returns the Mcp-Param-* headers for args: strings as they
// are (Base64 sentinel form when needed), integers in decimal, booleans as
// true/false; an absent or null value sends no header (PARAM-05, PARAM-06,
// B64-01..03).
func paramHeaders(bs []mcp.HeaderBinding, args json.RawMessage) ([]Header, error) {
	if len(bs) == 0 || len(args) == 0 {
		return nil, nil
	}
	out := make([]Header, 0, len(bs))
	for _, b := range bs {
		raw, ok := codec.LookupPath(args, b.Path...)
		if !ok {
			continue
		}
		raw = trimSpace(raw)
		var v string
		switch {
		case len(raw) == 0 || string(raw) == "null":
			continue
		case raw[0] == '"':
			var s string
			if err := codec.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("%w: %s", errHeaderValue, b.Name)
			}
			v = string(codec.AppendHeaderValue(nil, []byte(s)))
		case string(raw) == "true" || string(raw) == "false":
			v = string(raw)
		default:
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f != float64(int64(f)) || f > maxSafeInt || f < -maxSafeInt {
				return nil, fmt.Errorf("%w: %s = %s", errHeaderValue, b.Name, raw)
			}
			v = strconv.FormatInt(int64(f), 10)
		}
		out = append(out, Header{Name: b.Header, Value: v})
	}
	return out, nil
}

// HeaderBindings are one tool's x-mcp-header annotations: which argument
// goes into which Mcp-Param-* header (PARAM-01..06). The Client keeps them
// itself from ListTools; this is for callers that build requests by hand
// (mcpwire load).
type HeaderBindings struct{ bs []mcp.HeaderBinding }

// ParseHeaderBindings reads and checks a tool's inputSchema with
// mcp.ParseHeaderBindings (PARAM-02). An error means the tool definition is
// invalid and an HTTP client must not call it (PARAM-03).
func ParseHeaderBindings(inputSchema json.RawMessage) (HeaderBindings, error) {
	bs, err := mcp.ParseHeaderBindings(inputSchema)
	return HeaderBindings{bs}, err
}

// Headers returns the Mcp-Param-* headers for a tools/call with arguments,
// values encoded (B64-01..03), in header-name order.
func (h HeaderBindings) Headers(arguments json.RawMessage) ([]Header, error) {
	return paramHeaders(h.bs, arguments)
}
