package load

import (
	"errors"
	"io"
	"sync"
)

// errOutClosed is what a write after shutdown began gets.
var errOutClosed = errors.New("load: connection closed for writing")

// lineOut is the write side of a stream connection. Every caller hands it
// whole lines (a batch of requests, a cancellation, a listen request) built
// by the generator itself, so nothing is checked or copied: each call is one
// write, under a mutex so that lines from the sender, the reader (inline)
// and the sweeper never interleave. The first write error sticks.
type lineOut struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	closed bool
}

// write writes b, one or more complete lines, with one Write call.
func (o *lineOut) write(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if o.closed {
		return errOutClosed
	}
	n, err := o.w.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = err
	}
	return err
}

// writeLine writes b and a newline (b must not hold one: the generator's
// own frames never do). It allocates only for frames off the request path.
func (o *lineOut) writeLine(b []byte) error {
	line := make([]byte, 0, len(b)+1)
	return o.write(append(append(line, b...), '\n'))
}

// close refuses later writes (a write in progress finishes first).
func (o *lineOut) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}
