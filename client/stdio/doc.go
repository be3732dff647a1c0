// Package stdio is the client side of the stdio transport: Command spawns
// an MCP server as a child process, its stdin and stdout carrying the
// protocol (STD-01) and its stderr forwarded to a logger line by line
// (STD-05). Command.Dial is a client.Dialer: use it with
// client.NewLineTransport, which restarts the server with backoff when it
// dies (STD-14). Closing the stream runs the stop sequence (STD-11). The
// server side is package transport/stdio.
package stdio
