//go:build unix

package stdio

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// nonBlockingOut returns a writer for out when it is a file whose
// descriptor is in non-blocking mode (os.Pipe's, or the protocol stdout when
// it is a pipe, see ProtectStdout); nil otherwise.
func nonBlockingOut(out io.Writer) *rawWriter {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nb := false
	_ = rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nb = err == nil && fl&unix.O_NONBLOCK != 0
	})
	if !nb {
		return nil
	}
	w := &rawWriter{rc: rc}
	w.fn = w.write
	return w
}

// rawWriter writes to a non-blocking descriptor what it takes at once. Its
// calls must not overlap (the output queue lets one flusher write at a
// time): it keeps the call's slice and result in its fields, so that the
// function rc.Write runs is bound once, in fn, instead of a closure and
// its captured results allocated on every write.
type rawWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool // w.write
	b   []byte
	n   int
	err error
}

func (w *rawWriter) write(fd uintptr) bool {
	for {
		w.n, w.err = unix.Write(int(fd), w.b)
		if w.err != unix.EINTR {
			return true // never wait: the caller leaves the rest to the writer
		}
	}
}

// tryWrite writes what the descriptor takes at once: n < len(b) with a nil
// error when the peer is full.
func (w *rawWriter) tryWrite(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	cerr := w.rc.Write(w.fn)
	n, err := w.n, w.err
	w.b = nil // keep no reference to the caller's buffer
	if n < 0 {
		n = 0
	}
	if err == unix.EAGAIN {
		err = nil
	}
	if err == nil {
		err = cerr
	}
	return n, err
}
