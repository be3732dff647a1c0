// Package legacy serves MCP 2025-11-25 (and 2025-06-18, 2025-03-26) to old
// clients from the same engine.Server that serves 2026-07-28: the same
// tools, resources, prompts and completions, written once. It is optional
// and kept apart: no modern package imports it, and the modern endpoint
// keeps every LEG-01..10 rule (no sessions, no GET stream, no
// server→client requests).
//
// # HTTP
//
// Server.Handler is a 2025-11-25 Streamable HTTP endpoint for its own path
// (mount it beside the modern one with streamhttp.Config.Mounts, e.g.
// /mcp-2025, or in any net/http router):
//
//   - POST initialize creates a session: its Mcp-Session-Id is a state
//     handle (128 random bits) of Config.Store, bound to the caller's
//     principal; the InitializeResult's capabilities, serverInfo and
//     instructions come from the engine's server/discover. Every later
//     request needs the header: without it 400, for an unknown, expired
//     or foreign session 404 (the client initializes again). DELETE ends
//     the session.
//   - Each request runs through the engine as a 2026-07-28 request whose
//     _meta carries the session's client capabilities, client info and
//     log level (logging/setLevel); the result loses the 2026-only members
//     (resultType, ttlMs, cacheScope, serverInfo in _meta), and "resource
//     not found" becomes -32002. The answer is a JSON body unless a
//     notification (progress, log) or a server→client request comes
//     first: then the response is an SSE stream.
//   - Mounted on streamhttp's fasthttp front end (Config.Mounts), the
//     common case — a request such as tools/call of a live session,
//     with ordinary headers — is served on the fasthttp goroutine
//     without a net/http request: the body read in place, the engine's
//     message and the answer built in pooled space, an Inline handler
//     run where the request was read (as on the modern endpoint), a few
//     allocations per call. Anything else (initialize, GET, DELETE,
//     notifications, the session's own methods, odd headers or bodies)
//     takes the net/http handler, with the same answers. The session
//     record is read from Config.Store on every call either way, except
//     when the store is a state.Memory whose Generation for the session
//     has not moved since the last read and the record's expiry has not
//     passed (nothing was written, so a read would return the same
//     record); its decoded form and the encoded _meta are reused while
//     the store's version of it stands, so a DELETE, an expiry or a
//     change made by another replica is seen at the next call. (A shared
//     store such as Redis is read every time: no cue between replicas is
//     sure to arrive before the client's next call.)
//   - ping, logging/setLevel, resources/subscribe and
//     resources/unsubscribe are answered here; the log level and the
//     subscriptions live in the session record.
//   - GET opens the session's notification stream (one per session,
//     409 for a second): tools, prompts and resources list_changed, and
//     resources/updated for the subscribed URIs, fed by an internal
//     subscriptions/listen of the engine, so by the same ToolsChanged,
//     ResourceUpdated… calls and, with a backplane, by every replica.
//     Keep-alive comments every Config.KeepAlive; a client that stops
//     reading is cut off past Config.MaxPendingBytes or
//     Config.WriteIdleTimeout (Stats.SlowConsumers).
//
// # MRTR tools and old clients
//
// A tool (or prompt, or resource) that answers input_required is served
// to a 2025 client with the equivalent server→client requests
// (sampling/createMessage, elicitation/create, roots/list) on the POST's
// SSE stream, where the session's client declared that capability at
// initialize. The client's answers, POSTed back, become inputResponses
// (with the requestState) of a retry run by this package, up to
// Config.MaxRounds rounds, each input waited for at most
// Config.InputTimeout. An input whose capability the client did not
// declare is answered with a JSON-RPC error (-32603) naming the
// capability; a tool that requires a capability up front
// (Tool.RequiredClientCapabilities) gets the engine's -32021 as it would
// on the modern endpoint. The answers must reach the replica holding the
// stream: behind a balancer, route a session's POSTs to one replica
// (e.g. stick on Mcp-Session-Id) or the input wait times out.
//
// # Sessions and scale-out
//
// Sessions are records of Config.Store, the store of state handles
// (state.Memory by default, redisstate when shared): any replica serves a
// session another created. A session expires Config.IdleTimeout after its
// last use (the store's expiry is pushed forward at most every quarter of
// it). A process holds at most Config.MaxSessions; an initialize past
// that gets 503 with Retry-After (Stats.Refused): an initialize flood
// fills the bound, never memory, and established sessions go on. One
// authenticated principal holds at most Config.MaxSessionsPerPrincipal
// (100) of the sessions created here, one client IP at most
// Config.MaxSessionsPerIP (256): past either, 429 with Retry-After
// (Stats.RefusedPerPrincipal, RefusedPerIP), and the others are still
// served (F5).
// Subscriptions changed on another replica reach this replica's GET
// stream at once through the engine's backplane (stream.go: a private
// per-session cue URI; Stats.Resyncs), and in any case by the next
// keep-alive tick. A lookup that misses just after the store lost its data
// (state.ErrLost) is 503 saying so, not 404.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// The legacy endpoint takes the modern transports' message limits:
// Config.MaxBodyBytes (DefaultMaxBodyBytes, 4 MiB: 413) for HTTP and
// Config.MaxLine (DefaultMaxLine, 4 MiB: the line connection ends with
// ErrLineTooLong) for stdio, both counted in Stats.TooLarge; give them the
// values given to streamhttp.Config.MaxBodyBytes and stdio
// Options.MaxLine. MaxSessions, MaxPendingBytes, MaxRounds,
// WriteIdleTimeout and InputTimeout can be disabled with a negative value;
// IdleTimeout (sessions always expire) and KeepAlive (an interval) cannot:
// a negative value is their default.
//
// # Not served
//
// Batches (2025-03-26 only), SSE event ids and resumption (Last-Event-ID),
// and the 2024-11-05 HTTP+SSE transport.
package legacy
