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
//     scope="…", resource_metadata="…" (RFC 6750 §3.1);
//   - every 401 carries resource_metadata, and error="invalid_token" when
//     a token was sent;
//   - the verified token reaches handlers as a *Principal (PrincipalOf),
//     with the TLS client certificate when mTLS is on; a token bound to a
//     certificate (RFC 8705 cnf x5t#S256) is refused without it.
//
// Verifier.Install wires it into a streamhttp.Config (both front ends).
// The verifier never logs a token.
package auth
