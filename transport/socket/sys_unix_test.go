//go:build unix

package socket

import "syscall"

// setRecvBuffer sets a socket's receive buffer (SO_RCVBUF) to n bytes.
func setRecvBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
