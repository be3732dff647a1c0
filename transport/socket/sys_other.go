//go:build !linux

package socket

// peerCred is not implemented here: Peer.Cred stays nil.
func peerCred(fd int) *Cred { return nil }

// kernelQueued is not known here: progress is what leaves gnet's buffer.
func kernelQueued(fd int) int { return 0 }
