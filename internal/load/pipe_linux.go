//go:build linux

package load

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// errNoWake: the pipe's reader could not be woken from outside, so the
// blocking pipes are not used (the caller falls back to os/exec's).
var errNoWake = errors.New("load: cannot open a pipe's write end through /proc/self/fd")

// blockingPipes connects cmd's stdin and stdout to blocking pipes outside
// Go's network poller (os/exec's are non-blocking and polled), so that the
// reader goroutine waits for the server in read(2) itself: one system call
// per batch of replies, no wake-up through the network poller and no
// poll(2) before the read. Writes to the child's stdin block in write(2).
// childEnds closes the parent's copies of the child's ends (after Start).
//
// A read blocked on a pipe ends only with data or once every write end is
// closed, and a grandchild of the server may hold the write end forever;
// pipeReader.Close therefore wakes it by writing a byte through a write end
// of its own, opened on /proc/self/fd. Where that open fails (no /proc),
// blockingPipes returns errNoWake and nothing else.
func blockingPipes(cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser, childEnds func(), err error) {
	var in, out [2]int
	if err := unix.Pipe2(in[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, nil, fmt.Errorf("pipe: %w", err)
	}
	if err := unix.Pipe2(out[:], unix.O_CLOEXEC); err != nil {
		unix.Close(in[0])
		unix.Close(in[1])
		return nil, nil, nil, fmt.Errorf("pipe: %w", err)
	}
	pr := &pipeReader{fd: out[0]}
	w, err := pr.openWake()
	if err != nil {
		for _, fd := range []int{in[0], in[1], out[0], out[1]} {
			unix.Close(fd)
		}
		return nil, nil, nil, errNoWake
	}
	unix.Close(w)
	// A descriptor in blocking mode gives a file outside the network poller.
	childIn, childOut := os.NewFile(uintptr(in[0]), "|0"), os.NewFile(uintptr(out[1]), "|1")
	cmd.Stdin, cmd.Stdout = childIn, childOut
	return os.NewFile(uintptr(in[1]), "|1"), pr,
		func() { childIn.Close(); childOut.Close() }, nil
}

// pipeReader reads a blocking pipe for one goroutine. Close may be called
// from another goroutine: a Read waiting for input then returns
// os.ErrClosed. The descriptor is closed by the Read that returns the end
// (EOF, an error or Close).
type pipeReader struct {
	fd      int
	closing atomic.Bool // set by Close before it wakes the reader
	done    bool        // the reader's: fd is closed

	mu     sync.Mutex // orders Close's wake-up against the closing of fd
	closed bool       // fd is closed (under mu)
}

// wakeByte is what Close writes to end a Read (never handed to the
// caller: a Read that finds closing set after its read discards the data).
var wakeByte = []byte{'\n'}

func (p *pipeReader) Read(b []byte) (int, error) {
	if p.done {
		return 0, os.ErrClosed
	}
	for {
		if p.closing.Load() {
			return 0, p.end(os.ErrClosed)
		}
		n, err := unix.Read(p.fd, b)
		switch {
		case n > 0:
			if p.closing.Load() {
				return 0, p.end(os.ErrClosed) // the data may be Close's byte
			}
			return n, nil
		case err == unix.EINTR:
			continue
		case err == nil:
			return 0, p.end(io.EOF)
		default:
			return 0, p.end(err)
		}
	}
}

func (p *pipeReader) end(err error) error {
	p.done = true
	p.mu.Lock()
	p.closed = true
	unix.Close(p.fd)
	p.mu.Unlock()
	return err
}

// procFD is where a process's descriptors can be opened again (a
// variable so that a test can take it away).
var procFD = "/proc/self/fd/"

// openWake opens a write end of the pipe p reads (non-blocking: a full
// pipe has input for the reader anyway).
func (p *pipeReader) openWake() (int, error) {
	return unix.Open(procFD+strconv.Itoa(p.fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// closeUnread closes a pipeReader nothing has read or will read.
func (p *pipeReader) closeUnread() { _ = p.end(nil) }

// Close makes a Read waiting for input return (the descriptor is closed by
// that Read). It is idempotent.
func (p *pipeReader) Close() error {
	p.closing.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil // the reader has ended: fd may name another file now
	}
	w, err := p.openWake()
	if err != nil {
		return err
	}
	_, _ = unix.Write(w, wakeByte)
	unix.Close(w)
	return nil
}
