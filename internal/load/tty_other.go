//go:build !linux

package load

import "os"

// IsTerminal reports whether f is a character device (an approximation
// of a terminal outside Linux).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
