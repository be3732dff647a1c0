package engine

import "github.com/mcpwire/mcpwire/mcp"

// HeaderBindings returns the tool's x-mcp-header bindings (sorted by
// header name). The slice must not be modified.
func (t *Tool) HeaderBindings() []mcp.HeaderBinding { return t.bindings }

// HeaderBindingNames returns, when every binding is a top-level argument,
// the argument names in the order of HeaderBindings (so one pass over the
// arguments finds them all), and ok true.
func (t *Tool) HeaderBindingNames() (names []string, ok bool) {
	return t.bindingNames, t.bindingNames != nil || len(t.bindings) == 0
}
