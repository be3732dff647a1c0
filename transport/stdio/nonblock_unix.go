//go:build unix

package stdio

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// nonBlockingOut returns the raw connection of out when it is a file whose
// descriptor is in non-blocking mode (os.Pipe's, or the protocol stdout when
// it is a pipe, see ProtectStdout); nil otherwise.
func nonBlockingOut(out io.Writer) syscall.RawConn {
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
	return rc
}

// tryWrite writes what the descriptor takes at once: n < len(b) with a nil
// error when the peer is full.
func tryWrite(rc syscall.RawConn, b []byte) (int, error) {
	var n int
	var err error
	cerr := rc.Write(func(fd uintptr) bool {
		for {
			n, err = unix.Write(int(fd), b)
			if err != unix.EINTR {
				return true // never wait: the caller leaves the rest to the writer
			}
		}
	})
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
