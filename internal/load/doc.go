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
//   - stdio/TCP/Unix: each connection has a window of -w slots (a
//     request's id encodes its slot: a reply finds it without a map), a
//     sender goroutine and a timeout sweeper. Input is cut into lines by a
//     framing.Decoder over one reused 64 KiB read buffer; output goes out
//     as whole batches of lines, one write each (lineout.go). In a closed
//     loop whose window of requests fits in 32 KiB (so that the reader's
//     write can never wait on a server that waits for the reader) the
//     reader is the sender: it handles every line one read brought (one
//     clock reading for all of them), then writes the requests replacing
//     the answered ones in one write; per batch one read and one write, no
//     hand-off between goroutines, no allocation (TestStreamGeneratorAllocs,
//     BenchmarkStreamGenerator). The sender goroutine only starts the loop
//     and refills slots freed by timeouts; otherwise (open loop, larger
//     windows, the listen publisher) it queues every request it can start
//     and writes them in one batch. On Linux inline connections stay out
//     of Go's network poller: with fewer connections than Ps each has a
//     reader goroutine blocked in read(2) on its own socket or stdio pipe
//     (a pipe a grandchild holds open cannot stall the shutdown: Close
//     wakes the read through a write end opened on /proc/self/fd, see
//     pipe_linux.go), going through the scheduler every few milliseconds
//     so that sysmon does not keep taking its P; with more, a few pollers
//     read the sockets (epoll on sockets dialled outside Go's network poller, see
//     poll_linux.go): no goroutine parked or woken through the network
//     poller per batch. A poller with nothing ready parks on its epoll
//     descriptor through Go's network poller rather than blocking in
//     epoll_wait.
//   - Every reply is checked: the first of each shape with codec.Peek and
//     classify; a later reply that is byte for byte the same text but for
//     its integer id is the same JSON with another id, so it gets the same
//     verdict from two byte comparisons (reply.go; up to four shapes per
//     connection, any other line is parsed in full). Such a reply is
//     matched where it stands in the read buffer: finding its tail finds
//     its end. Each slot of an inline connection keeps its last request
//     line and writes the next id into it in place (slotline.go).
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
