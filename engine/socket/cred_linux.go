//go:build linux

package socket

import "golang.org/x/sys/unix"

// peerCred reads SO_PEERCRED from a connected Unix socket.
func peerCred(fd int) *Cred {
	u, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return nil
	}
	return &Cred{PID: int(u.Pid), UID: int(u.Uid), GID: int(u.Gid)}
}
