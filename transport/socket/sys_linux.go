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

// kernelQueued returns the bytes written to the socket that the peer has
// not taken yet (SIOCOUTQ), so that a peer reading slowly through a large
// kernel buffer still counts as progress.
func kernelQueued(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
	if err != nil {
		return 0
	}
	return n
}
