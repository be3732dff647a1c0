//go:build !unix

package streamhttp

import (
	"net"
	"syscall"
)

// inlineWriter: events always go through the pump here.
type inlineWriter struct{ rc syscall.RawConn }

func rawConnOf(net.Conn) syscall.RawConn     { return nil }
func (w *inlineWriter) bind(syscall.RawConn) {}
func (w *inlineWriter) try([]byte) int       { return 0 }
