package streamhttp

import "sync/atomic"

// gauges are the transport's levels, kept with atomics where they change
// (a connection accepted or closed, an SSE event queued or written), never
// per plain JSON request.
type gauges struct {
	conns  atomic.Int64 // connections accepted by the limit listener and not yet closed
	queued atomic.Int64 // SSE bytes queued for streams and not yet taken by a write
}

// Gauges is a snapshot of the transport's levels.
type Gauges struct {
	// OpenConns counts the connections open now, on every listener of
	// this Server (Serve and NetListener), listen streams taken over from
	// the HTTP server included.
	OpenConns int64
	// QueuedBytes is the SSE output (progress, logs, listen-stream events)
	// waiting for a write to the client.
	QueuedBytes int64
}

// Gauges returns the transport's levels now (for metrics scrapes).
func (s *Server) Gauges() Gauges {
	return Gauges{OpenConns: s.gauges.conns.Load(), QueuedBytes: s.gauges.queued.Load()}
}
