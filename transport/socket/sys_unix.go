//go:build unix

package socket

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// setUmask sets the process umask to mask and returns what restores the
// previous one. The umask is the process's: files other goroutines create
// meanwhile get no wider modes than mask allows.
func setUmask(mask int) (restore func()) {
	old := unix.Umask(mask)
	return func() { unix.Umask(old) }
}

// chmodSocket sets a Unix socket file's permission bits.
func chmodSocket(path string, mode os.FileMode) error { return os.Chmod(path, mode) }

// dupListenerAddr returns the local address of fd, a duplicate of a
// listener's descriptor, and closes fd; nil when the kernel does not say.
func dupListenerAddr(fd int) net.Addr {
	defer unix.Close(fd)
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return nil
}

// writeGuard is empty here: gnet buffers what the socket does not take at
// once, and the write-progress deadline (watchStall) watches that buffer.
type writeGuard struct{}

// write hands b to gnet, which never blocks on these systems.
func (*writeGuard) write(c *conn, b []byte) (int, error) { return c.gc.Write(b) }
