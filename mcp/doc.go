// Package mcp is the protocol vocabulary both sides of mcpwire speak, for
// MCP revision 2026-07-28: the list entries (Tool, Resource,
// ResourceTemplate, Prompt), content and results (Content, ToolResult,
// ReadResourceResult, PromptResult, CompleteResult), implementation info,
// the MRTR input requests (InputRequest, InputRequired), and the one rule
// both sides apply to a tool's schema: the x-mcp-header bindings
// (ParseHeaderBindings).
//
// The engine (package engine) encodes these types into results; the client
// (package client) decodes them. Each is declared here once. Nothing here
// does I/O or starts goroutines.
//
// JSON is encoded and decoded by package codec (sonic, exact-case keys).
// The specification: https://modelcontextprotocol.io/specification/2026-07-28
package mcp
