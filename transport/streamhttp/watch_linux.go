//go:build linux

package streamhttp

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watcher detects that the client closed its connection while a request
// is being handled (disconnect = cancellation, HCAN-01, C6). fasthttp's
// RequestCtx.Done fires only at server shutdown, and nothing reads the
// connection while the handler runs, so the watcher waits in the runtime's
// poller until the socket is readable and peeks (MSG_PEEK, nothing is
// consumed): zero bytes is the peer's FIN, an error a reset. Data means a
// pipelined request: the client is alive and watching stops.
//
// On a TLS connection data proves nothing: a client's close_notify alert
// is a record like any other (encrypted, in TLS 1.3). There the watcher
// asks for POLLRDHUP (the peer's FIN behind whatever is queued) whenever
// the socket has data, and otherwise keeps waiting for the next event.
//
// For requests that cannot stream, the watch starts only after a short
// delay, so fast requests never pay for it.
type watcher struct {
	mu      sync.Mutex
	timer   *time.Timer
	conn    net.Conn
	rc      syscall.RawConn
	tls     bool // data is no sign of life (see above)
	onGone  func()
	started bool
	stopped bool
	done    chan struct{}
}

// watchBeginGap, when set by a test, runs in begin between marking the
// watch started and starting the wait.
var watchBeginGap func()

// watchDelay is how long a request runs before its connection is watched.
const watchDelay = 20 * time.Millisecond

// arm starts watching conn after delay (0: now). onGone runs once if the
// client goes away before stop.
func (w *watcher) arm(conn net.Conn, delay time.Duration, onGone func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	_, isTLS := conn.(*tlsConn)
	w.mu.Lock()
	w.conn, w.rc, w.onGone, w.tls = conn, rc, onGone, isTLS
	w.started, w.stopped = false, false
	w.mu.Unlock()
	if delay == 0 {
		w.begin()
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(delay, w.begin)
	} else {
		w.timer.Reset(delay)
	}
}

func (w *watcher) begin() {
	w.mu.Lock()
	if w.stopped || w.rc == nil || w.started {
		w.mu.Unlock()
		return
	}
	w.started = true
	w.done = make(chan struct{})
	rc, onGone, done, conn, isTLS := w.rc, w.onGone, w.done, w.conn, w.tls
	// The server's read deadline for this request may still be set; the
	// watch must outlive it (the server sets its own before the next read).
	// Cleared under mu: stop sets its wake-up deadline only after it saw
	// started, so this cannot erase it. Cleared after the unlock, it once
	// could, and stop then waited for the client to close the connection
	// (a reply held back 15 s in the cluster test).
	_ = conn.SetReadDeadline(time.Time{})
	w.mu.Unlock()
	if watchBeginGap != nil {
		watchBeginGap()
	}
	go func() {
		defer close(done)
		var b [1]byte
		gone := false
		err := rc.Read(func(fd uintptr) bool {
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch {
			case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
				return false // keep waiting
			case err != nil || n == 0:
				gone = true
			case isTLS:
				if peerClosed(int(fd)) {
					gone = true
					return true
				}
				return false // wait for the next event (the FIN, perhaps)
			}
			return true
		})
		if gone && err == nil {
			onGone()
		}
	}()
}

// stop ends the watch and waits for it, leaving the connection's read
// deadline cleared for the server's next read.
func (w *watcher) stop() {
	w.mu.Lock()
	if w.rc == nil {
		w.mu.Unlock()
		return
	}
	w.stopped = true
	started, done, conn := w.started, w.done, w.conn
	w.conn, w.rc, w.onGone = nil, nil, nil
	w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	if started {
		_ = conn.SetReadDeadline(time.Now()) // wakes the poller wait
		<-done
		_ = conn.SetReadDeadline(time.Time{})
	}
}

// peerClosed reports whether the peer has shut down its side of the
// socket, whatever data is still queued before its FIN.
func peerClosed(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
}
