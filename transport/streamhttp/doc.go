// Package streamhttp is the Streamable HTTP binding of an engine.Server
// (MCP 2026-07-28, HTTP-*): the server side. The client side is package
// client/streamhttp.
//
// New binds an engine to one POST endpoint (Config.Path, default "/mcp",
// HTTP-01) with a Config whose zero value is the safe default. Two front
// ends run the same validation pipeline:
//
//   - fasthttp: Listen and Serve (or ListenAndServe). fasthttp's pooled
//     workers and buffers; read deadlines kept by the connection itself
//     (no timer work per keep-alive request); listen streams taken over
//     from fasthttp, so that an idle one holds no server goroutine or
//     buffer, and on a plain socket no goroutine of its own either (its
//     pump runs only while there is something to write).
//   - net/http: Handler returns an http.Handler for an existing router;
//     NetListener and ConnContext give it the connection limits and the
//     request-smuggling refusal the fasthttp front end has on its own. The
//     embedding http.Server owns the timeouts and the header limit.
//
// Each POST carries one JSON-RPC request or notification (HTTP-05/06);
// GET and other methods get 405 with Allow: POST (HTTP-10). The reply is
// application/json when the handler produces only its result, and
// text/event-stream when a notification (progress, a requested log, a
// listen stream) comes first (HTTP-07, SSE-*): the choice is made lazily,
// at the first thing the handler emits. Notifications get 202 (HTTP-06).
// Closing the connection cancels the request (HCAN-01). Mcp-Session-Id
// and Last-Event-ID are ignored.
//
// # The fast path
//
// Checks run cheapest first, so a hostile request costs little. A request
// with two lines of a field read once (Origin, Host, Authorization,
// Content-Type) is refused first, with 400 and a -32600 naming it, on
// every path (Stats.DuplicateHeaders, F2): parsers disagree on which of
// two lines counts, and a check on one and a use of the other is a
// bypass (two Host lines: net/http's own 400 on that front end). Then:
// path (404), method (405), shutdown (503), Origin (403, SEC-01/02), Host
// on loopback listeners (403, SEC-03), Config.Authenticate (401/403,
// SEC-04; bounded by Config.AuthTimeout, 10 s: 503, and cancelled when the
// client leaves, F4),
// Content-Type (415), Accept (406), Content-Encoding (415/413). Then the
// body is peeked once (codec.Peek: no full decode) and the mirrored
// headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) are
// compared with it byte for byte, base64 values decoded into a reused
// buffer, interleaved with the engine's _meta checks in the order HVAL-02
// gives (400 with -32020/-32021/-32022/-32602, 404 with -32601), then
// Config.Authorize (403, per-tool scopes: package auth). The checks
// of a valid request allocate nothing. A handler that cannot notify, or is
// Tool.Inline, runs on the connection's goroutine with no hand-off; its
// result is encoded into a pooled buffer and written as one response.
// x-mcp-header bindings are computed once, when the tool is registered.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default. Here MaxHeaderBytes (also each
// connection's read buffer) is such a field, and so are KeepAlive and
// CompressMinBytes, an interval and a threshold rather than limits.
//
// Every limit has a default, its own answer and a counter in Stats: the
// body (Config.MaxBodyBytes, 4 MiB, also
// chunked and after Content-Encoding: 413, BodyTooLarge), the header block
// (MaxHeaderBytes, 16 KiB: 431, HeadersTooLarge), reading one request
// (ReadTimeout, 10 s: 408, ReadTimeouts) and the wait between two of its
// reads (ReadIdleTimeout, 10 s: ReadIdleTimeouts), keep-alive idle
// (IdleTimeout, 60 s), a stream write without progress (WriteIdleTimeout,
// 30 s, never an absolute deadline: StreamWriteErrors), bytes queued for a
// stream whose client stopped reading (MaxPendingBytes, 8 MiB;
// MaxListenPendingBytes, 1 MiB, for listen streams, where repeated updates
// of one URI collapse: SlowConsumers), connections per client IP
// (MaxConnsPerIP, 1024: 429) and in all (MaxConns, 16384: 503), and a
// request with both Content-Length and Transfer-Encoding (400 and close:
// BadFraming). Behind a balancer, Config.TrustedProxies makes the server
// read a PROXY protocol header so the per-IP limit counts clients.
// The engine's per-caller limits (engine.Config.MaxListensPerPrincipal,
// MaxInFlightPerPrincipal, RatePerPrincipal) are answered 429 with
// Retry-After; an anonymous caller is keyed by its client IP unless that
// is loopback (the operator's tools, or a local proxy: list it in
// TrustedProxies so that the PROXY header's client counts).
//
// Compression (Config.Compression) applies to JSON replies of at least
// CompressMinBytes; request bodies may be gzip or zstd, decoded under the
// body limit. SSE is never compressed: flushing a compressor after each
// event costs more than the bytes it saves, and its state costs hundreds
// of KiB per open stream.
//
// # TLS
//
// Config.TLS makes both front ends speak HTTPS: the handshake runs above
// the connection limits and the PROXY header, so a connection is counted
// before any certificate work, and it is bounded by the read timeouts like
// the first request. ALPN offers http/1.1, never h2 (HTTP/2 is not
// served; acme-tls/1 and other protocols in NextProtos are kept), and TLS
// 1.2 is the minimum unless MinVersion says otherwise. Plain HTTP sent
// to a TLS listener is answered with a plain 400 and closed
// (Stats.PlainOnTLS); other failed handshakes are counted in
// TLSHandshakeErrors. CertFiles serves a certificate and key from PEM
// files and picks up renewed files without a restart (checked on a
// handshake at most every CertConfig.CheckInterval, or at once with
// Reload, e.g. on SIGHUP); open connections keep the certificate they
// negotiated. With NetListener the net/http adapter serves TLS the same
// way: serve the listener with http.Server.Serve, not ServeTLS.
//
// Remote MCP servers are reached over HTTPS (the authorization spec
// requires it). Listen and Serve refuse a non-loopback address unless
// Config.AllowNonLoopback is set (ErrNonLoopback) and, without Config.TLS,
// unless Config.InsecurePlaintext also says plain HTTP is meant
// (ErrPlaintext): a balancer that terminates TLS in front, a private
// network. Serve then logs a warning.
//
// # Shutdown
//
// Shutdown stops this transport only: new POSTs get 503, listen streams
// complete with a final result (SUB-10), in-flight requests may finish
// until the context ends and are then cancelled. Whoever created the
// engine shuts it down, once, after its transports.
package streamhttp
