package socket

import (
	"context"

	"github.com/mcpwire/mcpwire/engine"
)

// scopeOf returns the engine scope of a connection: TCP and Unix-socket
// requests carry their own transport label ("tcp", "unix") in the engine's
// request-duration histograms and in-flight counts.
func (s *Server) scopeOf(c *conn) *engine.Scope {
	if c.unix {
		return s.uscope
	}
	return s.scope
}

// shutdownScopes shuts both scopes down at once (each refuses new requests
// at its start, so neither waits for the other's drain).
func (s *Server) shutdownScopes(ctx context.Context) error {
	uerr := make(chan error, 1)
	go func() { uerr <- s.uscope.Shutdown(ctx) }()
	err := s.scope.Shutdown(ctx)
	if e := <-uerr; err == nil {
		err = e
	}
	return err
}

// Gauges is a snapshot of the transport's connections.
type Gauges struct {
	OpenTCP, OpenUnix int // connections open now
	// QueuedBytes is the output waiting in the connections' queues for a
	// write (gnet's own outbound buffer is not counted).
	QueuedBytes int
}

// Gauges returns the open connections per network and the bytes queued
// for them, read from the connection table at call time (for metrics
// scrapes; it takes the server's lock and each connection's output lock).
func (s *Server) Gauges() Gauges {
	var g Gauges
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.unix {
			g.OpenUnix++
		} else {
			g.OpenTCP++
		}
		g.QueuedBytes += c.lc.Pending()
	}
	return g
}
