// Package streamhttp is the Streamable HTTP client transport (MCP
// 2026-07-28, HTTP-*): Dial returns a client.Transport for an http:// or
// https:// endpoint, used through client.New. The server side is package
// transport/streamhttp; this package links neither it nor fasthttp: it
// speaks HTTP/1.1 itself (internal/httpwire parses replies and SSE).
//
// What the transport does:
//
//   - Header mirroring: MCP-Protocol-Version, Mcp-Method, Mcp-Name (in
//     the Base64 form when the value needs it) and the Mcp-Param-* headers
//     the client learned from the tool's x-mcp-header annotations
//     (mcp.ParseHeaderBindings).
//   - Replies as one JSON body or an event stream (SSE-*), read as they
//     come; closing an exchange, or the end of its context, closes the
//     connection, which cancels the request on the server (HCAN-01).
//   - A bounded pool of keep-alive connections (Config.MaxConns,
//     listen streams included); a request that never reached the server
//     is reported as not delivered, so the client re-sends it with a new
//     id.
//   - Authorization through Config.Auth (package client/oauth runs
//     the MCP OAuth 2.1 flow); Config.TLSConfig for private roots.
//   - The older eras: a 2025-11-25 session (Mcp-Session-Id) and the
//     2024-11-05 HTTP+SSE transport, when the client's era probe falls
//     back to them.
//
// Limits: a reply's size (Config.MaxMessage, by default the server's
// body limit), the connections open at once, unread messages per exchange.
package streamhttp
