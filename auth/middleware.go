package auth

import (
	"slices"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// Middleware enforces Config.ToolScopes inside the engine, whatever path
// the call came by: a tools/call of a tool with scopes whose caller is
// not a *Principal holding them (and Config.Scopes) is refused with a
// JSON-RPC error (HTTP 403 where the transport is HTTP) whose data names
// the scopes the call needs ({"scope": "a b"}), and the handler does not
// run. Install's Authorize already answers the Streamable HTTP endpoint
// with the insufficient_scope challenge; add Middleware to
// engine.Config.Middleware when the same engine is reached otherwise too
// (a transport/legacy mount, whose Authenticate is the same Verifier's,
// turns the data into the same challenge).
func (v *Verifier) Middleware() engine.Middleware {
	// Per tool with scopes: what it needs and its refusal, built once (a
	// refused call allocates nothing).
	type toolRule struct {
		need    []string
		refusal *codec.Error
	}
	rules := make(map[string]toolRule, len(v.cfg.ToolScopes))
	for tool, need := range v.cfg.ToolScopes {
		if len(need) > 0 {
			data := append([]byte(`{"scope":`), codec.AppendString(nil, v.challengeScope(need))...)
			rules[tool] = toolRule{need, &codec.Error{Code: codec.CodeInvalidRequest,
				Message: "Forbidden: the token lacks a scope this tool needs", Data: append(data, '}'), Status: 403}}
		}
	}
	return func(next engine.HandlerFunc) engine.HandlerFunc {
		return func(c *engine.Call) error {
			if c.Method() == "tools/call" {
				if rule, ok := rules[c.Name()]; ok {
					p, _ := c.Principal().(*Principal)
					if p == nil || p.missing(rule.need) || p.missing(v.cfg.Scopes) {
						v.stats.InsufficientScope.Add(1)
						return rule.refusal
					}
				}
			}
			return next(c)
		}
	}
}

// challengeScope is the scope an insufficient_scope challenge names for a
// call that needs need: Config.Scopes and need, sorted, once each.
func (v *Verifier) challengeScope(need []string) string {
	all := slices.Concat(v.cfg.Scopes, need)
	slices.Sort(all)
	return strings.Join(slices.Compact(all), " ")
}
