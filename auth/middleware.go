package auth

import (
	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// errScope is the JSON-RPC error of a call Middleware refuses.
var errScope = &codec.Error{Code: codec.CodeInvalidRequest, Message: "Forbidden: the token lacks a scope this tool needs", Status: 403}

// Middleware enforces Config.ToolScopes inside the engine, whatever path
// the call came by: a tools/call of a tool with scopes whose caller is
// not a *Principal holding them (and Config.Scopes) is refused with a
// JSON-RPC error (HTTP 403 where the transport is HTTP) and the handler
// does not run. Install's Authorize already answers the Streamable HTTP
// endpoint with the insufficient_scope challenge; add Middleware to
// engine.Config.Middleware when the same engine is reached otherwise too
// (a transport/legacy mount, whose Authenticate is the same Verifier's).
func (v *Verifier) Middleware() engine.Middleware {
	return func(next engine.HandlerFunc) engine.HandlerFunc {
		return func(c *engine.Call) error {
			if c.Method() == "tools/call" {
				if need := v.cfg.ToolScopes[c.Name()]; len(need) > 0 {
					p, _ := c.Principal().(*Principal)
					if p == nil || p.missing(need) || p.missing(v.cfg.Scopes) {
						v.stats.InsufficientScope.Add(1)
						return errScope
					}
				}
			}
			return next(c)
		}
	}
}
