package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// HeaderBinding is one x-mcp-header annotation of a tool's input schema
// (PARAM-01..06): the value at Path inside params.arguments is mirrored in
// the HTTP header "Mcp-Param-" + Name. Bindings are computed once, when the
// tool is registered, never per request.
type HeaderBinding struct {
	Name   string   // annotation value, e.g. "Region"
	Header string   // "Mcp-Param-Region"
	Path   []string // property names from the arguments root
	Type   string   // "string", "integer" or "boolean"
}

// HeaderBindings returns the tool's x-mcp-header bindings (sorted by
// header name). The slice must not be modified.
func (t *Tool) HeaderBindings() []HeaderBinding { return t.bindings }

// HeaderBindingNames returns, when every binding is a top-level argument,
// the argument names in the order of HeaderBindings (so one pass over the
// arguments finds them all), and ok true.
func (t *Tool) HeaderBindingNames() (names []string, ok bool) {
	return t.bindingNames, t.bindingNames != nil || len(t.bindings) == 0
}

// headerBindings validates and extracts the x-mcp-header annotations of an
// input schema (PARAM-02). An annotation reachable other than through
// "properties" keys, on a property of another type, with a value that is not
// an RFC 9110 token, or duplicated case-insensitively makes the whole tool
// invalid.
func headerBindings(schema json.RawMessage) ([]HeaderBinding, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	total := countAnnotations(root)
	if total == 0 {
		return nil, nil
	}
	var out []HeaderBinding
	var walk func(node any, path []string) error
	walk = func(node any, path []string) error {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		props, ok := obj["properties"].(map[string]any)
		if !ok {
			return nil
		}
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			prop, ok := props[name].(map[string]any)
			if !ok {
				continue
			}
			p := append(append([]string(nil), path...), name)
			if v, ok := prop["x-mcp-header"]; ok {
				b, err := bindingFor(v, prop, p)
				if err != nil {
					return err
				}
				out = append(out, b)
			}
			if err := walk(prop, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil); err != nil {
		return nil, err
	}
	if len(out) != total {
		return nil, fmt.Errorf("x-mcp-header is only allowed on properties reachable through \"properties\" keys (PARAM-02)")
	}
	seen := map[string]string{}
	for _, b := range out {
		k := strings.ToLower(b.Name)
		if other, dup := seen[k]; dup {
			return nil, fmt.Errorf("x-mcp-header %q is used twice (%s and %s)", b.Name, other, strings.Join(b.Path, "."))
		}
		seen[k] = strings.Join(b.Path, ".")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Header < out[j].Header })
	return out, nil
}

func bindingFor(v any, prop map[string]any, path []string) (HeaderBinding, error) {
	name, ok := v.(string)
	if !ok || !isToken(name) {
		return HeaderBinding{}, fmt.Errorf("x-mcp-header of %s must be a non-empty RFC 9110 token", strings.Join(path, "."))
	}
	typ, _ := prop["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return HeaderBinding{}, fmt.Errorf("x-mcp-header %q is on a property of type %v; only string, integer and boolean are allowed", name, prop["type"])
	}
	return HeaderBinding{Name: name, Header: "Mcp-Param-" + name, Path: path, Type: typ}, nil
}

func countAnnotations(node any) int {
	switch n := node.(type) {
	case map[string]any:
		c := 0
		for k, v := range n {
			if k == "x-mcp-header" {
				c++
			}
			c += countAnnotations(v)
		}
		return c
	case []any:
		c := 0
		for _, v := range n {
			c += countAnnotations(v)
		}
		return c
	}
	return 0
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
