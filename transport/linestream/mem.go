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
	*Signals
	c       *Conn
	deliver func(frame []byte) error
	line    []byte
}

// NewMem binds an in-memory connection to the engine behind scope.
// deliver receives each frame the server writes, without its newline, in
// order, on the goroutine that made it ready (the sender's, a worker's, a
// publisher's), possibly while the engine holds a request's lock: it must
// copy what it keeps, return quickly and not call into the server. An
// error from deliver fails the connection.
func NewMem(scope *engine.Scope, deliver func(frame []byte) error, cfg Config, principal any) *MemConn {
	m := &MemConn{Signals: NewSignals(), deliver: deliver}
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
		case <-m.In:
			paused = m.c.Resume()
		case <-m.Aborted():
			return m.Err()
		}
	}
	return m.Err()
}

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

// Signals is the wake-up and abort plumbing of a driver that runs
// goroutines of its own (a blocking reader, a writer): two wake channels
// that never block the waker, and the first Abort's reason. It implements
// Driver's WakeOutput, WakeInput and Abort.
type Signals struct {
	// Out and In receive a value when the output or the input side is
	// woken (capacity 1: wakes coalesce).
	Out, In chan struct{}

	once    sync.Once
	aborted chan struct{}
	mu      sync.Mutex
	err     error
}

// NewSignals returns ready Signals.
func NewSignals() *Signals {
	return &Signals{Out: make(chan struct{}, 1), In: make(chan struct{}, 1), aborted: make(chan struct{})}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// WakeOutput signals Out.
func (s *Signals) WakeOutput() { wake(s.Out) }

// WakeInput signals In.
func (s *Signals) WakeInput() { wake(s.In) }

// Abort records err (the first one only) and closes Aborted.
func (s *Signals) Abort(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.aborted)
	})
}

// Aborted is closed once Abort has been called.
func (s *Signals) Aborted() <-chan struct{} { return s.aborted }

// Err returns the reason given to Abort, or nil.
func (s *Signals) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
