// Package stdio binds the engine to a process's standard input and output
// (MCP 2026-07-28 stdio transport, STD-*).
//
// One JSON-RPC message per line, UTF-8, '\n'-terminated (STD-02); CR before
// LF is accepted; blank lines are skipped. A line that is not valid JSON-RPC
// is answered with -32700 (or -32600) without id and the reader goes on with
// the next line (STD-16). A line over the size limit (default 4 MiB) is
// answered -32600 "message too large", discarded without being buffered, and
// reading goes on (A1, A2).
//
// Serve protects the protocol stream: it moves it to a private duplicate of
// file descriptor 1 and points fd 1 at stderr, so a stray fmt.Println in a
// handler lands on stderr instead of corrupting stdout (STD-03, A14). Logs
// go to stderr through log/slog (STD-05). Windows has no dup2: there the
// stream moves to a duplicate of the stdout handle, os.Stdout and the
// process's standard output handle become stderr, and the original
// os.Stdout is closed: a print through os.Stdout lands on stderr, one
// through the original *os.File kept from before fails, and only code that
// saved the raw handle before Serve (C code through cgo, say) is not
// covered (see ProtectStdout). Elsewhere (neither Unix nor Windows) stdout
// is not protected.
//
// When stdin ends (EOF, STD-12) the server stops reading, completes listen
// streams with their final result, lets in-flight requests finish within
// Config.Grace (default 2 s), cancels what is left and returns nil (A15). A
// closed stdout (EPIPE) ends the connection: in-flight work is cancelled and
// Serve returns ErrOutputClosed (A16).
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// Config.MaxLine (framing.DefaultMaxLine, 4 MiB; the first line an
// Upgrade hook reads too) and Config.MaxPending
// (linestream.DefaultMaxPending, 64 MiB) can be disabled with a negative
// value. Config.Grace (DefaultGrace, 2 s) cannot: a negative value is
// the default.
package stdio
