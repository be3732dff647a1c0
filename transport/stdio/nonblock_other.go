//go:build !unix

package stdio

import (
	"io"
	"syscall"
)

// nonBlockingOut: elsewhere the reader always leaves writing to the writer.
func nonBlockingOut(io.Writer) syscall.RawConn { return nil }

func tryWrite(syscall.RawConn, []byte) (int, error) { return 0, nil }
