// Package stream serves the engine over reliable byte streams — TCP and
// Unix-domain sockets — with the stdio framing and rules unchanged
// (CUST-04): newline-delimited JSON-RPC, notifications/cancelled for
// cancellation (CUST-05), all of a connection's output on that connection.
//
// Connection setup: a client connects and sends requests; there is no
// handshake (every request carries its _meta). Framing: one message per
// line, at most Options.MaxLine bytes (default 4 MiB); a longer line is
// answered -32600 "message too large" and the connection is closed, as in
// nats (A1). Closing: the client closes its write side or the connection;
// in-flight requests then have Options.Grace to finish (SUB-10 for listen
// streams). A peer that stops reading is cut off at 64 MiB of queued output
// (A18).
//
// This binding uses a goroutine per connection on the standard library's
// poller; the event-loop binding on gnet replaces its internals behind the
// same API.
package stream

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/engine/stdio"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// Options configures a stream server; zero values select the defaults.
type Options struct {
	// MaxLine, MaxPending and Grace: as in stdio.Options.
	MaxLine, MaxPending int
	Grace               time.Duration
	// AllowNonLoopback must be set for Listen to accept a TCP address other
	// than loopback (SEC-04).
	AllowNonLoopback bool
	// MaxConns bounds concurrent connections; past it new ones are closed
	// at once and counted. Default 16384.
	MaxConns int
	Logger   *slog.Logger
}

// Server serves an engine on stream listeners.
type Server struct {
	eng *engine.Server
	opt Options
	log *slog.Logger

	mu      sync.Mutex
	lns     map[net.Listener]struct{}
	conns   map[net.Conn]struct{}
	closing bool
	wg      sync.WaitGroup

	// Refused counts connections closed because MaxConns was reached.
	Refused atomic.Uint64
}

// New returns a stream server for eng.
func New(eng *engine.Server, opt Options) *Server {
	if opt.MaxConns <= 0 {
		opt.MaxConns = 16384
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{eng: eng, opt: opt, log: log, lns: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
}

// ErrNonLoopback is returned by Listen for a non-loopback TCP address
// without Options.AllowNonLoopback.
var ErrNonLoopback = errors.New("stream: refusing a non-loopback listener without AllowNonLoopback")

// Listen opens a listener for network "tcp" or "unix", refusing a
// non-loopback TCP address unless Options.AllowNonLoopback. Serve it with
// Serve.
func (s *Server) Listen(network, addr string) (net.Listener, error) {
	if network == "tcp" && !s.opt.AllowNonLoopback && !netutil.IsLoopback(addr) {
		return nil, ErrNonLoopback
	}
	return net.Listen(network, addr)
}

// ErrClosed is returned by Serve after Shutdown.
var ErrClosed = errors.New("stream: server closed")

// Serve accepts connections on ln until Shutdown, serving each on its own
// goroutine. It returns ErrClosed after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			delete(s.lns, ln)
			s.mu.Unlock()
			if closing {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closing || len(s.conns) >= s.opt.MaxConns {
			s.mu.Unlock()
			s.Refused.Add(1)
			_ = c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	err := stdio.ServeConn(context.Background(), s.eng, c, c, stdio.Options{
		Grace: s.opt.Grace, MaxLine: s.opt.MaxLine, MaxPending: s.opt.MaxPending,
		Logger: s.log, CloseOnTooLong: true,
	})
	if err != nil && !errors.Is(err, stdio.ErrOutputClosed) {
		s.log.Debug("stream connection ended", "remote", c.RemoteAddr().String(), "err", err)
	}
}

// Shutdown stops accepting, ends the engine (listen streams get their final
// result, in-flight calls are cancelled when ctx ends), closes the
// connections and waits for them, by ctx's deadline.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	for ln := range s.lns {
		_ = ln.Close()
	}
	s.mu.Unlock()
	err := s.eng.Shutdown(ctx)
	s.mu.Lock()
	for c := range s.conns {
		if cw, ok := c.(interface{ CloseRead() error }); ok {
			_ = cw.CloseRead() // the reader sees EOF; output still drains
		} else {
			_ = c.Close()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}
