// Package client is the MCP client side of mcpwire: one Client over any
// Transport. The transports are in the sub-packages: Streamable HTTP from
// client/streamhttp (Dial); stdio, TCP and Unix sockets through
// NewLineTransport with a dialer from client/stdio (Command) or
// client/socket (Dialer). Package client/target opens one from a target
// string ("http://…", "stdio:'cmd …'", "tcp://…", "unix://…"). The
// protocol types a Client returns (mcp.Tool, mcp.ToolResult…) are package
// mcp's, the same the engine encodes. No client package links a server
// transport, fasthttp or gnet.
//
// What a Client does for the caller:
//
//   - Every request carries params._meta with protocolVersion,
//     clientCapabilities and clientInfo (META-02); a progressToken when the
//     call asks for progress (CallOptions.OnProgress, PROG-01); a logLevel
//     when it asks for log messages (GEN-13).
//   - Era: the first call probes with server/discover (STD-17, COMPAT-01).
//     A DiscoverResult or a recognised modern error (-32022 with
//     data.supported, -32020, -32021) means 2026-07-28; 401/403/5xx and, on
//     HTTP, timeouts are reported rather than taken for a legacy server
//     (COMPAT-02, the conservative reading); anything else falls back to a
//     2025-11-25 initialize, and on HTTP a 400/404/405 to that falls back
//     to the 2024-11-05 HTTP+SSE transport (COMPAT-04). Era reports it.
//   - Results without resultType read as "complete" (COMPAT-08); an
//     unknown resultType is an error (GEN-10).
//   - MRTR: an input_required result goes to Config.OnInput and the call
//     is retried with a new id, the original params, inputResponses and the
//     requestState byte for byte (MRTR-05), up to MaxInputRounds (MRTR-12).
//   - Cancellation by context: HTTP closes the reply stream (HCAN-01); line
//     streams send notifications/cancelled (STD-10). Replies that arrive
//     after are dropped (CAN-05). Every call has a timeout (TMO-01);
//     listen streams are exempt (SUB-13).
//   - Listen returns a Subscription: acknowledged first (SUB-03),
//     notifications matched by subscription id (STD-08); a stream that
//     breaks without its completion result is opened again with a new id
//     and EventRelistened tells the caller to re-fetch (SUB-10, SUB-12).
//   - A request that never reached the server is re-sent with a new id
//     (ErrNotDelivered); one whose connection died after it was sent is
//     re-sent only with CallOptions.Resend (SSE-09, STD-14).
//   - x-mcp-header: ListTools learns each tool's annotations, drops tools
//     whose annotations break PARAM-02 (PARAM-03), and later tools/call
//     requests carry the Mcp-Param-* headers (PARAM-05, PARAM-06).
//   - HTTP authorization (SEC-04) is the transport's: package
//     client/oauth implements client/streamhttp's Config.Auth (the MCP OAuth
//     2.1 flow, run on the server's 401 or 403 insufficient_scope, the
//     request then sent again); target.Config.OAuth sets it up.
//
// Line transports (LineTransport) match replies by id, progress by token,
// listen notifications by subscription id; skip and count lines that are
// not JSON-RPC; fail a reply over MaxLine with ErrTooLarge; and re-dial
// (restart a stdio server) with backoff when the stream ends.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// The client's limits: MaxQueued unread messages per exchange
// (LineConfig.MaxQueued and streamhttp.Config.MaxQueued,
// DefaultMaxQueued: ErrSlowConsumer past it), LineConfig.MaxLine per
// message on line streams (framing.DefaultMaxLine) and
// streamhttp.Config.MaxMessage on HTTP (ErrTooLarge past them),
// Config.MaxInputRounds (DefaultMaxInputRounds), Config.Timeout
// (DefaultTimeout) and the HTTP transport's MaxConns, DialTimeout and
// IdleTimeout; all can be disabled with a negative value. Config.ProbeTimeout
// (DefaultProbeTimeout) cannot, and LineConfig.MinBackoff and MaxBackoff
// pace re-dials rather than limit: for those a negative value is the
// default. Config.Retries is a count, not a limit: negative means no
// re-send. A listing reads a bounded number of pages.
//
// # Writing a Transport
//
// Inbox is the receiving side of an Exchange (the queue between the
// goroutine that reads the connection and Next, the bound, the end after
// the final message, cancellation), and Ending the end state alone, for an
// exchange that reads its reply where Next runs; LineTransport and
// client/streamhttp's Dial use them.
package client
