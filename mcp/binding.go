package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// HeaderBinding is one x-mcp-header annotation of a tool's input schema
// (PARAM-01..06): the value at Path inside params.arguments travels in the
// HTTP header "Mcp-Param-" + Name. A server checks the header against the
// body; a client fills it in.
type HeaderBinding struct {
	Name   string   // the annotation's value, e.g. "Region"
	Header string   // "Mcp-Param-" + Name (PARAM-04)
	Path   []string // property names from the arguments root
	Type   string   // "string", "integer" or "boolean"
}

// ParseHeaderBindings reads and checks the x-mcp-header annotations of an
// input schema (PARAM-02): each value a non-empty RFC 9110 token (so no
// control characters), unique case-insensitively, on a property typed
// string, integer or boolean, reached from the schema root through
// "properties" keys only. An annotation anywhere else (under items,
// anyOf/oneOf/allOf/not, if/then/else, $defs or at the root) makes the
// whole tool invalid: the error says why, and a client drops the tool
// (PARAM-03). The bindings come back sorted by header name; nil when the
// schema has none.
func ParseHeaderBindings(inputSchema json.RawMessage) ([]HeaderBinding, error) {
	if len(inputSchema) == 0 || !bytes.Contains(inputSchema, []byte("x-mcp-header")) {
		return nil, nil // the common case: nothing to parse
	}
	var root any
	if err := codec.Unmarshal(inputSchema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %v", err)
	}
	var out []HeaderBinding
	seen := map[string]string{}
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
			if v, ok := n["x-mcp-header"]; ok {
				b, err := bindingAt(v, n, path, viaProps)
				if err != nil {
					return err
				}
				low := strings.ToLower(b.Name)
				if other, dup := seen[low]; dup {
					return fmt.Errorf("x-mcp-header %q is used twice (%s and %s)", b.Name, other, strings.Join(path, "."))
				}
				seen[low] = strings.Join(path, ".")
				out = append(out, b)
			}
			for k, v := range n {
				switch k {
				case "x-mcp-header":
				case "properties":
					props, ok := v.(map[string]any)
					if !ok {
						if err := walk(v, path, false); err != nil {
							return err
						}
						continue
					}
					for name, sub := range props {
						if err := walk(sub, append(append([]string(nil), path...), name), viaProps); err != nil {
							return err
						}
					}
				default:
					// Any other keyword (items, anyOf, $defs, not, if…)
					// leaves the properties-only chain.
					if err := walk(v, path, false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Header < out[j].Header })
	return out, nil
}

// bindingAt checks the annotation v on the schema node n at path.
func bindingAt(v any, n map[string]any, path []string, viaProps bool) (HeaderBinding, error) {
	where := strings.Join(path, ".")
	if !viaProps || len(path) == 0 {
		return HeaderBinding{}, fmt.Errorf("x-mcp-header at %q is not on a property reachable through \"properties\" keys only (PARAM-02)", where)
	}
	name, ok := v.(string)
	if !ok || !netutil.IsToken(name) {
		return HeaderBinding{}, fmt.Errorf("x-mcp-header of %s must be a non-empty RFC 9110 token", where)
	}
	typ, _ := n["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return HeaderBinding{}, fmt.Errorf("x-mcp-header %q is on a property of type %v; only string, integer and boolean are allowed", name, n["type"])
	}
	return HeaderBinding{Name: name, Header: "Mcp-Param-" + name, Path: append([]string(nil), path...), Type: typ}, nil
}
