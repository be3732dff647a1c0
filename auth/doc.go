// Package auth makes a Streamable HTTP server an OAuth 2.1 resource server
// as the MCP authorization specification asks
// (https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization):
//
//   - it serves the server's Protected Resource Metadata (RFC 9728) at
//     /.well-known/oauth-protected-resource and at the path-suffixed URI
//     of a non-root resource, without a token;
//   - it verifies bearer JWTs (RFC 9068 access tokens) against the
//     issuer's JSON Web Key Set, discovered from the issuer's metadata
//     (RFC 8414, then OpenID Connect discovery) unless configured: keys are
//     cached, an unknown kid refetches the set (at most once per
//     Config.JWKSMinRefetch), only the algorithms of Config.Algorithms are
//     accepted (never none, never HS* with a public key), exp is required
//     and exp and nbf are checked with Config.Leeway, iss must equal
//     Config.Issuer and aud must name this resource (RFC 8707);
//   - it checks opaque tokens, when configured, with token introspection
//     (RFC 7662), the same issuer, audience and expiry rules applied;
//   - it requires scopes: Config.Scopes of every request, and
//     Config.ToolScopes of a tools/call by tool name, refused with 403
//     and WWW-Authenticate: Bearer error="insufficient_scope",
//     scope="…", resource_metadata="…" (RFC 6750 §3.1). ToolScopes are
//     enforced by streamhttp's Authorize hook, on the Streamable HTTP
//     endpoint only: an engine also reached otherwise (a transport/legacy
//     mount, stdio, sockets) enforces them only with Verifier.Middleware
//     in engine.Config.Middleware — without it a legacy client behind the
//     same Authenticate calls any tool with a token that passes
//     Config.Scopes. mcpwire serve adds the Middleware itself;
//   - every 401 carries resource_metadata, and error="invalid_token" when
//     a token was sent;
//   - the verified token reaches handlers as a *Principal (PrincipalOf),
//     with the TLS client certificate when mTLS is on; a token bound to a
//     certificate (RFC 8705 cnf x5t#S256) is refused without it. Its
//     identity (String: "sub:" and sub, else "client:" and client_id) keys
//     every per-caller state; a token naming neither is refused;
//   - introspection is bounded (Config.MaxIntrospections in flight, 503
//     past them) and inactive answers are remembered for a short while
//     (Config.IntrospectionNegativeTTL).
//
// Verifier.Install wires it into a streamhttp.Config (both front ends);
// add Verifier.Middleware to the engine too when it has ToolScopes and is
// reached by another path than the Streamable HTTP endpoint.
// The verifier never logs a token.
package auth
