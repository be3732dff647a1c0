// Package load is the load generator behind `mcpwire load`: it drives an MCP
// (revision 2026-07-28) server over Streamable HTTP, stdio, TCP or a Unix
// socket and reports throughput, latency percentiles, errors by kind, bytes
// and its own CPU cost per request.
//
// # Design for low overhead
//
// The generator must measure the server, not itself:
//
//   - Request bytes are built once per workload (request line, headers and
//     a JSON body split at the id); per request only the decimal id (and the
//     Content-Length) is spliced in. No encoding/json, no reflection, no
//     allocation on the hot path.
//   - Responses are read with codec.Peek (one pass, zero allocation); the
//     error code comes from codec.LookupPath on the message.
//   - HTTP uses a minimal HTTP/1.1 client of its own (keep-alive,
//     Content-Length, chunked and close-delimited bodies, text/event-stream
//     parsed incrementally), one request in flight per connection (no
//     pipelining). In a closed loop over two connections or more on Linux
//     (the HTTP relay, httprelay.go)
//     the connections are sockets read by the same pollers as the socket
//     relay below: the poller parses each response as its bytes arrive
//     (the parser resumes where it ran out of bytes), records it and writes
//     the next request on the same connection itself; a goroutine per
//     connection only opens connections (at the start, after a close or a
//     timeout). Otherwise (one connection, -rate, the listen publisher,
//     other systems) each connection has a goroutine over a net.Conn.
//   - stdio/TCP/Unix use framing.Reader and framing.Writer; each connection
//     has a sender goroutine (a window of -w requests in flight, ids encode
//     the window slot), a reader goroutine and a timeout sweeper. In a
//     closed loop the sender queues every request it can start and writes
//     them in one batch (pipelining). With one request in flight (-w 1,
//     closed loop) the reader sends the next request itself as soon as it
//     has read an answer: no hand-off between goroutines per request; the
//     sender only starts the loop and refills a slot freed by a timeout.
//     On Linux such TCP and Unix sockets are not read by a goroutine each
//     but by a few pollers (epoll on sockets dialled outside Go's network
//     poller, see poll_linux.go): per request one read and one write, no
//     goroutine parked or woken, no read that returns EAGAIN. A poller with
//     nothing ready parks on its epoll descriptor through Go's network
//     poller rather than blocking in epoll_wait.
//   - Latencies go to one HDR histogram per goroutine (1 µs .. 60 s, 3
//     significant digits), merged at the end.
//
// # Measurement rules
//
//   - A request belongs to the measurement when its start time falls after
//     the warm-up; requests started before the end are drained and counted.
//   - Closed loop (-rate 0): latency is from the send to the final response.
//   - Open loop (-rate R): request i is due at t0 + i/R on whichever
//     connection is free (a shared ticket counter); latency is measured from
//     that intended time, so a server that stalls is charged for the queue
//     it causes (coordinated-omission correction). Requests that fell due
//     inside the window but found no free connection until 50 ms after it
//     closed are reported as "unsent" (text output and a warning; not part
//     of the JSON errors).
//   - Every finished request counts in "requests"; requests answered with a
//     JSON-RPC error or an HTTP error status also count in latency. A failed
//     request is counted once in "errors", under the JSON-RPC code when the
//     body carries one ("rpc_-32601"), else the HTTP status ("http_503"),
//     else "timeout", "io", "connect", "bad_response" or "tool_error"
//     (a tools/call result with isError true).
//
// # Listen workload
//
// Every stream is acknowledged before the first publish. The publisher (an
// open loop at -publish-rate, on its own connection for HTTP, TCP and Unix
// targets; on the server processes themselves for stdio, since each
// process has its own subscriptions) logs the send time of every touch.
// The k-th notifications/resources/updated read on a stream is timed
// against the k-th publish of its publisher: exact for a server that
// delivers every publish in order. A server that collapses or drops
// updates for a stream that is behind (mcpwire's engine may collapse
// repeated updates of one URI) delivers fewer than expected (reported),
// and the later deliveries of that stream are then timed against earlier
// publishes, which overstates their latency. "requests" and "latency_us"
// are the touch calls; "deliveries" counts every event of a measured
// publish on every stream.
//
// # Reports
//
// Result.WriteHGRM writes the latency histogram in HdrHistogram's
// percentile distribution text (report_hgrm.go: the reference layout,
// values in ms). With Config.Timeline each recorder also adds every
// measured completion to a ring of one-second slots (atomic counts, log
// buckets within 1.6%), which a sweeper empties into per-second samples
// every 250 ms: memory is bounded whatever the duration
// (report_timeline.go). Result.WriteHTML draws both as one page through
// internal/chart: inline SVG, no script, nothing fetched, every string
// escaped by html/template.
package load
