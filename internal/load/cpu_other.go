//go:build !unix

package load

// cpuTimeUs is not measured on this platform.
func cpuTimeUs() int64 { return 0 }
