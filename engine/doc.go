// Package engine is the transport-agnostic core of mcpwire: the MCP
// 2026-07-28 method table, the registries of tools, resources, templates and
// prompts, per-request contexts, dispatch with panic recovery, the in-flight
// table with cancellation, the progress limiter and the subscription hub.
//
// Data flows one way: a transport hands the engine one framed message, the
// engine validates it (codec.Peek, then the _meta rules), routes it, runs the
// handler on a pooled worker goroutine and gives the encoded response back to
// the transport through a Replier. The engine never knows which transport
// carried the message.
//
// # Guarantees
//
//   - Every request is self-describing (GEN-11, META-03): the protocol version
//     and client capabilities are read from each request's params._meta and
//     never carried over from an earlier request on the same connection.
//   - A request whose _meta lacks io.modelcontextprotocol/protocolVersion or
//     io.modelcontextprotocol/clientCapabilities is answered -32602 (HTTP 400);
//     an unsupported version -32022 with data {supported, requested}
//     (DISC-04); a tool that needs a client capability not declared in this
//     request -32021 with data.requiredCapabilities (META-08).
//   - Removed methods (initialize, ping, logging/setLevel, resources/subscribe,
//     resources/unsubscribe), unknown methods, and methods whose capability the
//     server does not advertise get -32601 (DISC-08). An initialize without a
//     modern _meta claim gets -32022 naming the served versions (DISC-05, our
//     choice).
//   - tools/call arguments are checked against the tool's InputSchema
//     (compiled once by AddTool) before the handler runs. Arguments that
//     fail it are a tool execution error, not a protocol error (SEP-1303):
//     a result with isError true whose text names each failing path and
//     rule on a line of its own ("Invalid arguments: arguments.b:
//     required"), at most 8 paths of at most 200 bytes each, never a copy
//     of the input (args.go; Tool.SkipValidation opts out). Arguments that
//     are not a JSON object, an unknown tool and the other protocol-level
//     cases stay -32602. Bind and typed tools answer what they cannot
//     decode the same way; Stats.InvalidArguments counts them all.
//   - prompts/get enforces the prompt's declared arguments (required ones
//     present, declared ones strings) before the handler runs: -32602
//     naming them.
//   - Typed tools and prompts (AddTool[In, Out], AddPrompt[In]) infer
//     their schemas from Go types once, at registration (schema.go); the
//     arguments are checked, then decoded into In with the exact-case
//     rules of Call.Bind; Out is encoded once, as structuredContent and as
//     the text content. With Config.ValidateOutput (or
//     Tool.ValidateOutput) a result that fails its outputSchema is never
//     sent: -32603, logged, counted (Stats.InvalidOutputs).
//   - A handler panic becomes -32603 with a generic message; the stack goes to
//     the log only (C12).
//   - tools/list, prompts/list, resources/list and resources/templates/list
//     are paged, Config.PageSize entries a page in key order (name, URI, URI
//     template), each page with its cache hints. A nextCursor holds the last
//     key sent, not server state, so any replica with the same catalogue
//     serves the next page; when the catalogue changes between pages the
//     listing goes on after that key, and an entry present throughout is
//     listed exactly once (cursor.go). A cursor that is not a string, is
//     longer than 64 KiB, is malformed, altered, or belongs to another list
//     is -32602 before any handler runs (Stats.InvalidCursors). A first
//     page is one cached result and a later page one copy of encoded
//     entries: neither allocates (TestListAllocs), unless the page is over
//     the 64 KiB a recycled Call keeps, when it allocates its own size.
//   - notifications/cancelled cancels the handler's context and suppresses
//     everything further for that request (STD-10, CAN-04); unknown ids are
//     ignored.
//   - Progress is opt-in by progressToken, strictly increasing, coalesced
//     (latest value wins, at most one notification per
//     Config.ProgressInterval, default 50 ms) and never sent after the
//     response (PROG-03, PROG-07, PROG-08).
//   - Call.Log is rate limited per request (a burst of Config.LogBurst,
//     then one per Config.LogInterval; default 20 and 10 ms). Log messages
//     are never coalesced: one over the limit is dropped and counted
//     (Stats.LogsDropped), and the client gets one warning with
//     {"droppedLogMessages":N} just before the response.
//   - Each line connection has at most Config.MaxInFlight requests in
//     flight (default 256); beyond that the transport stops taking frames
//     (A19).
//   - One caller — Call.Principal, or an anonymous request's
//     Request.SetLimitKey (Streamable HTTP: a non-loopback client IP) —
//     has at most Config.MaxListensPerPrincipal listen streams (default
//     64) and Config.MaxInFlightPerPrincipal requests on workers (default
//     256) open across its connections, and, with
//     Config.RatePerPrincipal, a token bucket of requests (default off),
//     and with Tool.RatePerPrincipal one per tool.
//     One more is refused with -32603, data {"limit","retryAfter"} and
//     HTTP 429 (Retry-After), counted once (Server.LimitStats), while
//     other callers are served (F5; limit.go).
//   - With Config.Backplane (scale-out, see backplane.go and package
//     state), change cues reach the listen streams of every replica,
//     once per stream; while the backplane is lost, listen streams are ended
//     (HTTP: dropped, so clients listen again) and new ones refused with
//     -32603 and HTTP 503, never left open to miss cues silently (E1). A
//     publish that fails or times out ends the listen streams that would
//     have received its cue, here and, through a state.CueMissed, on every
//     replica; one refused while the backplane is lost, on every other
//     replica (F9). A handler error wrapping state.ErrUnavailable is -32603
//     with HTTP 503 (state.ErrLost: ErrStateLost, saying the state was lost).
//   - Shutdown(ctx) completes listen streams with a final result, waits for
//     in-flight work, cancels what is left when ctx ends, and returns by ctx's
//     deadline (C13).
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// In Config: MaxInFlight (DefaultMaxInFlight), MaxListensPerPrincipal
// (DefaultMaxListensPerPrincipal), MaxInFlightPerPrincipal
// (DefaultMaxInFlightPerPrincipal), RatePerPrincipal
// (DefaultRatePerPrincipal: none unless set), ProgressInterval
// (DefaultProgressInterval), LogInterval and LogBurst (DefaultLogInterval,
// DefaultLogBurst) and PageSize (DefaultPageSize) can be disabled with a
// negative value; a negative
// MaxDepth (DefaultMaxDepth) leaves only the parser's hard cap,
// codec.MaxDepthLimit. PublishTimeout (DefaultPublishTimeout) cannot be
// disabled: a negative value is the default. Timeout has no default: 0
// and negative both mean none. CacheTTL is a hint, not a limit: negative
// means a ttlMs of 0. Server.Config reports the effective values.
//
// # Handler contract
//
// Handlers receive a *Call, which is also the request's context.Context. A
// Call and every slice it returns are valid only until the handler returns:
// the engine recycles it (the fasthttp RequestCtx rule). Goroutines started
// by a handler must not use the Call after the handler has returned; the
// Call's context is cancelled when the request completes. Contexts derived
// from a Call (context.WithTimeout(c, …)) are cancelled when it ends and
// start no watcher goroutine (Call.AfterFunc); they too must not be used
// after the handler returns. A Call carries the handler's methods only:
// the request's members, results, Progress and Log.
//
// A request with a progressToken (or a logLevel) costs what one without
// costs until its handler first reports progress (or logs): the limiter's
// timer exists only once a burst has to be coalesced.
//
// # Extension points
//
// Config.Hooks are called when a connection, a call or a listen stream
// starts and ends, on every transport, with an Outcome saying why it ended
// (ok, a JSON-RPC error code, cancelled, disconnect, shutdown, timeout).
// Config.Middleware wraps dispatch, for policy, per-tool quotas and audit
// logs; Config.ToolFilter hides tools per caller in tools/list
// and tools/call alike. Config.ResourceLister lists resources from the
// application's own store, a page per request, after the registered ones,
// and Config.ResourceReader reads the URIs no registered resource or
// template matches. A handler reads the request's HTTP headers with
// Call.Header and its connection with Call.Conn; hooks attach values for
// the handler with Call.SetValues (package observe/otelmcp attaches trace
// spans this way). Unused, each costs one pointer test per request and no
// allocation; used with callbacks that allocate nothing, still no
// allocation (TestEchoAllocsWithExtensions, TestHandlerAllocsWithExtensions).
// Hooks run with no engine lock held.
//
// # Transports
//
// A transport (transport/stdio, transport/socket, transport/streamhttp,
// transport/legacy, or your own) reaches the engine through a Scope, which
// it gets from NewScope(srv, name): the embedder's *Server has no
// transport-facing methods. Scope.Begin makes a *Request from a framed
// message; the transport runs Check (or its steps, interleaved with its
// own), Fail or Start/Run, and receives the answers through its Replier.
// A Request is a distinct type: a handler's *Call cannot be converted into
// one, so the binding operations (Fail, Start, SetRawResult…) are out of a
// handler's reach. Scope.ConnOpen and ConnClose report connections to the
// hooks, Scope.ServerMeta gives the _meta a transport-built result
// carries, and Scope.Shutdown stops that transport only; whoever created
// the Server shuts the engine down, once, after the transports. The
// line-framed transports share one connection core, transport/linestream.
//
// The scope's name ("http", "stdio", "tcp", "unix"…) labels its requests
// in the request-duration histograms (Server.RequestDurations) and the
// in-flight counts (Server.Load) that observe/metrics exports; the name is
// a label only, the engine treats every scope alike. Recording a request's
// duration costs two monotonic clock reads and two atomic adds, and
// allocates nothing; a transport that begins several requests from one
// read takes one reading per read for their start (Scope.Now,
// Scope.BeginBorrowedAt), so each request costs one read, or runs them as
// a Batch (Scope.StartBatch, Scope.BeginInBatch: the line transports), so
// that the requests that end where they were read share one reading at
// the batch's end too, and one registration for Shutdown. A transport
// that implements BatchReplier (Batch.SetReplier) also gets those
// requests' responses on the batch's goroutine, so it can keep them
// without a lock and queue the read's answers at once; Request.ReplyEscaped
// tells it which of them need no newline scan. A transport that recovers
// panics on the batch's goroutine (Batch.SetRecovers, Batch.Panicking,
// Batch.Recover) spares each inline request of the batch its own deferred
// recover; a handler's panic is still answered -32603 and counted.
//
// Lock order is documented in LOCKS.md.
package engine
