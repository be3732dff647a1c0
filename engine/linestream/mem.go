package linestream

import (
	"bytes"
	"context"
	"sync"

	"github.com/mcpwire/mcpwire/engine"
)

// MemConn is a Conn driven in memory, without a socket or a process: the
// caller sends messages, and every frame the server writes is handed to a
// callback. It serves tests of handlers and transports, and in-process
// clients. Send is the input side (one goroutine at a time).
type MemConn struct {
	c       *Conn
	deliver func(frame []byte) error
	wakeIn  chan struct{}
	aborted chan struct{}
	once    sync.Once
	mu      sync.Mutex
	err     error
	line    []byte
}

// NewMem binds an in-memory connection to the engine behind scope.
// deliver receives each frame the server writes, without its newline, in
// order, on the goroutine that made it ready (the sender's, a worker's, a
// publisher's), possibly while the engine holds a request's lock: it must
// copy what it keeps, return quickly and not call into the server. An
// error from deliver fails the connection.
func NewMem(scope *engine.Scope, deliver func(frame []byte) error, cfg Config, principal any) *MemConn {
	m := &MemConn{deliver: deliver, wakeIn: make(chan struct{}, 1), aborted: make(chan struct{})}
	m.c = New(scope, m, cfg, context.Background(), principal)
	return m
}

// Conn returns the underlying line connection.
func (m *MemConn) Conn() *Conn { return m.c }

// Send feeds one message (a newline is added). While the in-flight bound
// holds it blocks, as a reader that stops reading would, until a request
// ends. It returns the connection's failure, if any.
func (m *MemConn) Send(msg []byte) error {
	m.line = append(append(m.line[:0], msg...), '\n')
	paused := m.c.Feed(m.line)
	for paused {
		select {
		case <-m.wakeIn:
			paused = m.c.Resume()
		case <-m.aborted:
			return m.abortErr()
		}
	}
	return m.abortErr()
}

// Aborted is closed once the connection has failed (see Err).
func (m *MemConn) Aborted() <-chan struct{} { return m.aborted }

// Err returns why the connection failed, or nil.
func (m *MemConn) Err() error { return m.abortErr() }

// Close ends the connection as a peer that goes away: requests in flight
// are cancelled.
func (m *MemConn) Close() {
	m.c.Close(nil)
	m.c.ReleaseInput()
}

// Write implements Driver: it splits b into frames for deliver.
func (m *MemConn) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if err := m.deliver(b[:i]); err != nil {
			return n, err
		}
		n += i + 1
		b = b[i+1:]
	}
	return n, nil
}

// WakeOutput implements Driver: frames are delivered at once.
func (m *MemConn) WakeOutput() { _ = m.c.Flush() }

// WakeInput implements Driver.
func (m *MemConn) WakeInput() {
	select {
	case m.wakeIn <- struct{}{}:
	default:
	}
}

// Abort implements Driver.
func (m *MemConn) Abort(err error) {
	m.once.Do(func() {
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(m.aborted)
	})
}

func (m *MemConn) abortErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
