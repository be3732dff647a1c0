// Package httpwire is the response side of a minimal HTTP/1.1 client: a
// read buffer over a connection (Reader), the status line and headers
// (Head), the body in its three framings (Body: Content-Length, chunked,
// delimited by the end of the connection) and an incremental
// text/event-stream parser (SSEParser). It is shared by the load generator
// (internal/load) and the Streamable HTTP client transport
// (client/streamhttp.Dial).
//
// Guarantees and limits:
//
//   - No allocation on the hot path: segments and lines alias the Reader's
//     buffer and stay valid only until the next call that reads; the
//     caller owns and sizes that buffer.
//   - A head line (status line, header, chunk-size line) must fit the
//     buffer: ErrLineTooLong otherwise (a push-mode Reader grows its
//     buffer up to framing.TopClass first).
//   - Body.ReadAll gathers at most MaxBody bytes (ErrBodyTooBig). Body.Next
//     has no limit of its own: callers that stream count what they keep.
//   - SSEParser keeps at most one partial line and one event's data;
//     Pending reports their size so that callers bound it.
//   - Every parser is tested at every split point of its input and one
//     byte at a time (wire_test.go, sse_test.go) and fuzzed (fuzz_test.go).
//   - Interim 1xx responses are skipped; 204, 304 and 101 have no body.
//     Content-Length and Transfer-Encoding both present: chunked wins
//     (RFC 9112 §6.3); conflicting Content-Length values are an error.
package httpwire
