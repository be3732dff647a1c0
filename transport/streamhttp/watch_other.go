//go:build !linux

package streamhttp

import (
	"net"
	"time"
)

// watcher is a no-op where peeking a socket is not implemented: a
// disconnect is then noticed at the next write.
type watcher struct{}

const watchDelay = 20 * time.Millisecond

func (w *watcher) arm(conn net.Conn, delay time.Duration, onGone func()) {}
func (w *watcher) stop()                                                 {}
