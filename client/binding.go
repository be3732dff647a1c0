package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// binding is one x-mcp-header annotation of a tool's input schema: the
// argument at path goes into the header Mcp-Param-<name> (PARAM-01..06).
type binding struct {
	name string
	path []string
}

// maxSafeInt is 2^53-1 (PARAM-02 integer range).
const maxSafeInt = 1<<53 - 1

// bindingsOf reads the x-mcp-header annotations of an input schema and
// checks them (PARAM-02): each value a non-empty token without control
// characters, unique case-insensitively, on a string, integer or boolean
// property reached from the root through "properties" keys only. An
// annotation anywhere else makes the tool invalid (the error names why).
func bindingsOf(schema json.RawMessage) ([]binding, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil, nil // the common case: nothing to check
	}
	var root any
	if err := codec.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	var out []binding
	seen := map[string]bool{}
	var walk func(node any, path []string, viaProps bool) error
	walk = func(node any, path []string, viaProps bool) error {
		switch n := node.(type) {
		case []any:
			for _, e := range n {
				if err := walk(e, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if h, ok := n["x-mcp-header"]; ok {
				if !viaProps || len(path) == 0 {
					return fmt.Errorf("x-mcp-header outside a properties chain at %q", strings.Join(path, "."))
				}
				name, ok := h.(string)
				if !ok || !netutil.IsToken(name) {
					return fmt.Errorf("x-mcp-header %v on %q is not a header token", h, strings.Join(path, "."))
				}
				switch n["type"] {
				case "string", "integer", "boolean":
				default:
					return fmt.Errorf("x-mcp-header %q on %q: type %v is not string, integer or boolean", name, strings.Join(path, "."), n["type"])
				}
				low := strings.ToLower(name)
				if seen[low] {
					return fmt.Errorf("x-mcp-header %q is used twice", name)
				}
				seen[low] = true
				out = append(out, binding{name: name, path: append([]string(nil), path...)})
			}
			for k, v := range n {
				if k == "x-mcp-header" {
					continue
				}
				if k == "properties" {
					props, ok := v.(map[string]any)
					if !ok {
						continue
					}
					for pk, pv := range props {
						if err := walk(pv, append(append([]string(nil), path...), pk), viaProps); err != nil {
							return err
						}
					}
					continue
				}
				// Any other keyword (items, anyOf, $defs, not, if…) leaves
				// the properties-only chain.
				if err := walk(v, path, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// errHeaderValue: an annotated argument holds a value the header cannot
// carry (an object, a fraction, an integer beyond ±2^53-1).
var errHeaderValue = errors.New("client: x-mcp-header argument has an unsupported value")

// paramHeaders returns the Mcp-Param-* headers for args: strings as they
// are (Base64 sentinel form when needed), integers in decimal, booleans as
// true/false; an absent or null value sends no header (PARAM-05, PARAM-06,
// B64-01..03).
func paramHeaders(bs []binding, args json.RawMessage) ([]Header, error) {
	if len(bs) == 0 || len(args) == 0 {
		return nil, nil
	}
	out := make([]Header, 0, len(bs))
	for _, b := range bs {
		raw, ok := codec.LookupPath(args, b.path...)
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
				return nil, fmt.Errorf("%w: %s", errHeaderValue, b.name)
			}
			v = string(codec.AppendHeaderValue(nil, []byte(s)))
		case string(raw) == "true" || string(raw) == "false":
			v = string(raw)
		default:
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil || f != float64(int64(f)) || f > maxSafeInt || f < -maxSafeInt {
				return nil, fmt.Errorf("%w: %s = %s", errHeaderValue, b.name, raw)
			}
			v = strconv.FormatInt(int64(f), 10)
		}
		out = append(out, Header{Name: "Mcp-Param-" + b.name, Value: v})
	}
	return out, nil
}

// HeaderBindings are one tool's x-mcp-header annotations: which argument
// goes into which Mcp-Param-* header (PARAM-01..06). The Client keeps them
// itself from ListTools; this is for callers that build requests by hand
// (mcpwire load).
type HeaderBindings struct{ bs []binding }

// ParseHeaderBindings reads and checks a tool's inputSchema (PARAM-02). An
// error means the tool definition is invalid and an HTTP client must not
// call it (PARAM-03).
func ParseHeaderBindings(inputSchema json.RawMessage) (HeaderBindings, error) {
	bs, err := bindingsOf(inputSchema)
	return HeaderBindings{bs}, err
}

// Headers returns the Mcp-Param-* headers for a tools/call with arguments,
// values encoded (B64-01..03), in header-name order.
func (h HeaderBindings) Headers(arguments json.RawMessage) ([]Header, error) {
	return paramHeaders(h.bs, arguments)
}
