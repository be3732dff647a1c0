// Package linestream is the one connection core of every line-framed
// transport: stdio and the TCP and Unix sockets. A Conn turns the bytes a
// driver pushes into it into requests for the engine, and the engine's
// answers into newline-terminated frames the driver writes out.
//
// It is push-driven, so both kinds of driver feed the same code: the stdio
// binding's blocking reader calls Feed after each read, and the socket
// binding's event loop calls Feed from its traffic callback. Nothing in here
// blocks on the peer or starts a goroutine; handlers that are not Inline run
// on the engine's workers, never on the driver's goroutine.
//
// # Rules (CUST-04, STD-*)
//
//   - One JSON-RPC message per line; CR before LF is dropped; blank lines
//     are skipped (A4, A5). A line that is not valid JSON gets -32700
//     without an id and the next line is served (STD-16, A6-A8).
//   - A line over Config.MaxLine (default 4 MiB) is answered -32600
//     "message too large" without an id and discarded without buffering it
//     (A1, A2); with Config.CloseOnTooLong (sockets) the connection then
//     ends.
//   - notifications/cancelled cancels the named request (STD-10, CUST-05).
//     Unknown ids are ignored (CAN-04) but draw on a budget that every
//     request served refills: a peer that sends Config.CancelBudget more
//     of them than it sent requests is cut off (C8).
//   - At most engine.Config.MaxInFlight requests (listen streams
//     included) run at once. At the bound the Conn stops taking frames
//     (A19): the stdio reader stops reading; an event loop keeps at most
//     Config.MaxBacklog bytes of further input, then the connection ends.
//   - Output is batched: everything that becomes ready while the driver is
//     feeding, or before the driver flushes, leaves in one write. At most
//     Config.MaxPending bytes wait for a peer that does not read; past
//     that the connection ends as a slow consumer (A18).
//   - No frame written holds a raw newline (STD-02): an answer that would
//     is dropped (framing.ErrNewlineInFrame, logged by the engine at debug
//     level) and the connection goes on. Only answers with bytes the
//     engine did not escape itself are looked at: a response it wrote
//     entirely with its own encoders (engine.Request.ReplyEscaped: a text
//     result, a typed tool's flat result) is written as it is.
//   - Drain (EOF on stdio, a transport shutdown) completes listen streams
//     with their final result at once (SUB-10), lets the other requests
//     finish until its context ends, then cancels them.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// Every Config limit here can be disabled: MaxLine
// (framing.DefaultMaxLine), MaxPending (DefaultMaxPending), MaxBacklog
// (MaxLine + DefaultBacklogSlack) and CancelBudget (DefaultCancelBudget);
// so can engine.Config.MaxInFlight. Every limit has its own error and
// its own counter in engine.Stats.
package linestream
