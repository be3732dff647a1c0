package metrics

// The names and HELP texts of the counters the project's Stats structs
// hold. A metric name is part of an operator's dashboards and alerts, so it
// is written down here rather than derived from a Go field name (a casing
// rule once turned DuplicateIDs into duplicate_i_ds). The key is the Stats
// type's import path and name; each field maps to the part of the metric
// name after mcpwire_<subsystem>_ (the _total suffix of a counter is added
// by AddStats) and its HELP text. TestEveryStatsFieldIsNamed fails when a
// field is added to one of these types without an entry here; a field
// without one makes AddStats panic rather than export it under a made-up
// name.
//
// Types of an embedder's own name their fields with struct tags instead:
//
//	Calls atomic.Uint64 `metric:"calls" help:"Calls made."`

// statName is one field's metric name part and HELP text.
type statName struct{ name, help string }

const mod = "github.com/mcpwire/mcpwire/"

var statNames = map[string]map[string]statName{
	mod + "engine.Stats": {
		"Requests":          {"requests", "Requests dispatched to a handler."},
		"Notifications":     {"notifications", "Notifications received from peers."},
		"ParseErrors":       {"parse_errors", "Messages answered -32700 (not JSON)."},
		"InvalidRequests":   {"invalid_requests", "Messages answered -32600 (not a valid JSON-RPC request)."},
		"TooDeep":           {"too_deep", "Messages refused for nesting deeper than MaxDepth."},
		"LinesTooLong":      {"lines_too_long", "Frames refused for exceeding the size limit."},
		"Responses":         {"responses", "Responses received from a peer (ignored: the server sends no requests of its own)."},
		"MethodNotFound":    {"method_not_found", "Requests answered -32601 (unknown method)."},
		"InvalidParams":     {"invalid_params", "Requests answered -32602 by validation (invalid cursors and arguments included)."},
		"InvalidCursors":    {"invalid_cursors", "List cursors refused (not a string, too long, malformed, altered or another list's; -32602)."},
		"InvalidArguments":  {"invalid_arguments", "Arguments refused by a tool's input schema or handler, or missing prompt arguments."},
		"InvalidOutputs":    {"invalid_outputs", "Typed tool results refused by their output schema (answered -32603)."},
		"BadVersion":        {"bad_version", "Requests answered -32022 (unsupported protocol version)."},
		"MissingCaps":       {"missing_caps", "Requests answered -32021 (missing client capabilities)."},
		"Panics":            {"panics", "Handler panics, answered -32603."},
		"Cancelled":         {"cancelled", "Requests cancelled by their peer: notifications/cancelled, or a disconnect while they ran."},
		"UnknownCancels":    {"unknown_cancels", "Cancellations naming no request in flight."},
		"DuplicateIDs":      {"duplicate_ids", "Requests that reused the id of a request still in flight."},
		"InFlightStalls":    {"in_flight_stalls", "Times a connection's reads paused because MaxInFlight was reached."},
		"ProgressSent":      {"progress_sent", "Progress notifications sent."},
		"ProgressDropped":   {"progress_dropped", "Progress notifications dropped: non-increasing, late or without a token."},
		"ProgressCoalesce":  {"progress_coalesce", "Progress values replaced by a later one before they were sent."},
		"LogsSent":          {"logs_sent", "Log notifications (notifications/message) sent by handlers."},
		"LogsDropped":       {"logs_dropped", "Handler log messages dropped by the per-request rate limit."},
		"ListenStreams":     {"listen_streams", "Open subscriptions/listen streams."},
		"Deliveries":        {"deliveries", "Listen-stream notifications handed to transports."},
		"SlowConsumers":     {"slow_consumers", "Peers closed for not reading their output."},
		"ShutdownRefused":   {"shutdown_refused", "Requests refused because shutdown had begun."},
		"TimedOut":          {"timed_out", "Requests answered \"Request timed out\"."},
		"CancelFloods":      {"cancel_floods", "Line connections closed for cancelling unknown requests beyond the budget."},
		"InputOverflows":    {"input_overflows", "Line connections closed for input piling up while the in-flight bound held."},
		"Published":         {"published", "Change cues published to the backplane."},
		"PublishErrors":     {"publish_errors", "Change cues not published: backplane lost or publish failed."},
		"BackplaneLost":     {"backplane_lost", "Times the backplane subscription was lost."},
		"ListenInterrupted": {"listen_interrupted", "Listen streams ended because the backplane was lost."},
		"ListenRefused":     {"listen_refused", "Listen requests refused while the backplane was not connected."},
		"Unavailable":       {"unavailable", "Requests answered 503 because shared state was unreachable."},
	},
	mod + "transport/streamhttp.Stats": {
		"NotFound":           {"not_found", "HTTP requests for a path other than the endpoint (404)."},
		"MethodNotAllowed":   {"method_not_allowed", "HTTP requests with a method the endpoint does not serve (405)."},
		"ShuttingDown":       {"shutting_down", "HTTP requests refused because shutdown had begun (503)."},
		"BadOrigin":          {"bad_origin", "HTTP requests refused for their Origin header (403)."},
		"BadHost":            {"bad_host", "HTTP requests refused for their Host header."},
		"Unauthorized":       {"unauthorized", "HTTP requests refused by authentication (401)."},
		"Forbidden":          {"forbidden", "HTTP requests refused by authorization (403)."},
		"BadContentType":     {"bad_content_type", "POSTs whose Content-Type is not JSON (415)."},
		"NotAcceptable":      {"not_acceptable", "Requests whose Accept header allows no reply the endpoint can send (406)."},
		"BodyTooLarge":       {"body_too_large", "Request bodies over the size limit (413)."},
		"HeadersTooLarge":    {"headers_too_large", "Request header blocks over the size limit (431)."},
		"BadEncoding":        {"bad_encoding", "Request bodies with an unsupported or corrupt Content-Encoding."},
		"BadFraming":         {"bad_framing", "Malformed HTTP requests (400)."},
		"ReadTimeouts":       {"read_timeouts", "Requests not read in full within the read timeout (408)."},
		"ReadIdleTimeouts":   {"read_idle_timeouts", "Connections closed for sending nothing within the idle read timeout."},
		"BadMessage":         {"bad_message", "POST bodies that are not one JSON-RPC request or notification (400)."},
		"Rejected":           {"rejected", "Requests refused by the header checks (mirrored headers, version, capabilities)."},
		"Notifications":      {"notifications", "Notifications POSTed (202)."},
		"Streams":            {"streams", "Replies sent as an SSE stream (listen streams included)."},
		"KeepAlives":         {"keep_alives", "SSE keep-alive comments written."},
		"SlowConsumers":      {"slow_consumers", "SSE streams closed for not reading."},
		"Compressed":         {"compressed", "Replies sent compressed."},
		"Collapsed":          {"collapsed", "Listen-stream events dropped because the same change was still queued."},
		"TooManyConns":       {"too_many_conns", "Connections refused because the connection limit was reached."},
		"TooManyConnsPerIP":  {"too_many_conns_per_ip", "Connections refused because the per-IP connection limit was reached."},
		"StreamWriteErrors":  {"stream_write_errors", "SSE writes that failed (the client is gone)."},
		"Disconnects":        {"disconnects", "Requests whose client left before the reply was complete (each one running is also counted in mcpwire_engine_cancelled_total)."},
		"Unavailable":        {"unavailable", "Replies 503 because shared state was unreachable."},
		"Proxied":            {"proxied", "Connections accepted from a trusted proxy."},
		"BadProxyHeader":     {"bad_proxy_header", "Connections from a trusted proxy closed for a bad or missing PROXY header."},
		"TLSHandshakeErrors": {"tls_handshake_errors", "TLS handshakes that failed (a client that left is not counted)."},
		"PlainOnTLS":         {"plain_on_tls", "Plain HTTP requests sent to a TLS listener (answered 400)."},
	},
	mod + "transport/socket.Stats": {
		"Accepted":      {"accepted", "Socket connections served."},
		"Refused":       {"refused", "Socket connections closed at once: connection limit reached or shutting down."},
		"Open":          {"open", "Socket connections open now."},
		"AuthFailures":  {"auth_failures", "Socket connections refused by the authenticator."},
		"WriteTimeouts": {"write_timeouts", "Socket connections closed because their output made no progress."},
		"Disconnects":   {"disconnects", "Socket connections their peer closed while requests were in flight (the requests are counted in mcpwire_engine_cancelled_total)."},
	},
	mod + "transport/legacy.Stats": {
		"Sessions":       {"sessions", "Legacy (2025-11-25) sessions held by this process."},
		"Created":        {"created", "Legacy sessions created by initialize."},
		"Refused":        {"refused", "Legacy initialize refused because the session limit was reached (503)."},
		"Expired":        {"expired", "Legacy sessions ended for being idle."},
		"Deleted":        {"deleted", "Legacy sessions ended by DELETE."},
		"UnknownSession": {"unknown_session", "Legacy requests naming no live session (404)."},
		"MissingSession": {"missing_session", "Legacy requests without Mcp-Session-Id (400)."},
		"BadRequests":    {"bad_requests", "Legacy requests refused as malformed (4xx), oversized ones included."},
		"TooLarge":       {"too_large", "Legacy bodies or lines over the size limit."},
		"Requests":       {"requests", "Legacy requests answered."},
		"Streams":        {"streams", "Open legacy GET streams."},
		"StreamConflict": {"stream_conflict", "Second GET streams refused for a session that has one (409)."},
		"SlowConsumers":  {"slow_consumers", "Legacy streams closed for not reading."},
		"InputRequests":  {"input_requests", "Server-to-client requests sent to legacy clients."},
		"InputTimeouts":  {"input_timeouts", "Server-to-client requests legacy clients did not answer in time."},
		"InputRefused":   {"input_refused", "Input requests the session's capabilities do not allow (answered with an error)."},
		"StrayResponses": {"stray_responses", "Legacy client responses matching no server-to-client request."},
		"Unavailable":    {"unavailable", "Legacy replies 503 because the session store was unreachable."},
	},
	mod + "mrtr.Stats": {
		"Signed":         {"signed", "requestState values signed."},
		"Verified":       {"verified", "requestState values that passed every check."},
		"Malformed":      {"malformed", "requestState values refused as malformed."},
		"ForeignKey":     {"foreign_key", "requestState values refused: signed with a key not held."},
		"Tampered":       {"tampered", "requestState values refused: integrity tag mismatch."},
		"Expired":        {"expired", "requestState values refused: expired."},
		"WrongPrincipal": {"wrong_principal", "requestState values refused: issued to another principal."},
		"WrongTarget":    {"wrong_target", "requestState values refused: issued for another method, tool, prompt or resource."},
		"WrongArguments": {"wrong_arguments", "requestState values refused: issued for other arguments."},
	},
	mod + "state/redisstate.Stats": {
		"Ops":        {"ops", "Commands and scripts sent to Redis."},
		"Errors":     {"errors", "Redis commands that failed (unreachable, timed out, refused)."},
		"TooLarge":   {"too_large", "Values refused for exceeding the store's size limit."},
		"Published":  {"published", "Change cues published on Redis."},
		"Delivered":  {"delivered", "Change cues received from Redis and handed to a subscriber."},
		"Malformed":  {"malformed", "Messages on the cue channel that were not cues."},
		"Lost":       {"lost", "Redis subscriptions lost."},
		"Reconnects": {"reconnects", "Redis subscriptions re-established."},
	},
	mod + "client.LineStats": {
		"Dials":      {"dials", "Connections the client made (1 + restarts)."},
		"Lost":       {"lost", "Client connections that ended under it."},
		"StrayLines": {"stray_lines", "Lines from the server that were not JSON-RPC, skipped."},
		"TooLong":    {"too_long", "Lines from the server over the size limit, skipped."},
		"Unmatched":  {"unmatched", "Replies and notifications for no open request."},
		"Dropped":    {"dropped", "Notifications of a call dropped because too many were unread."},
	},
}
