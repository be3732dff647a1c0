//go:build !unix

package stdio

import "os"

// ProtectStdout returns os.Stdout unchanged on platforms without dup2: stray
// prints there do reach the protocol stream.
func ProtectStdout() (*os.File, error) {
	return os.NewFile(os.Stdout.Fd(), "mcp-stdout"), nil
}
