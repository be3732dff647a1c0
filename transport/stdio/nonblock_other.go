//go:build !unix

package stdio

import "io"

// nonBlockingOut: elsewhere the reader always leaves writing to the writer.
func nonBlockingOut(io.Writer) *rawWriter { return nil }

type rawWriter struct{}

func (*rawWriter) tryWrite([]byte) (int, error) { return 0, nil }
