//go:build linux

package load

import (
	"golang.org/x/sys/unix"

	"github.com/mcpwire/mcpwire/codec"
)

// readable reads once from a relay worker's socket into its buffer and
// parses what arrived (see httprelay.go).
func (w *httpWorker) readable(_ *poller, _ *codec.Envelope) {
	b := &w.conn.br
	if err := b.Room(); err != nil {
		w.relayEnded(err)
		return
	}
	n, err := w.fd.read(b.Buf[b.W:])
	if n > 0 {
		b.W += n
		b.Got += int64(n)
		w.r.bytesIn.Add(int64(n))
		w.step()
		return
	}
	if err == unix.EINTR || err == unix.EAGAIN {
		return
	}
	w.relayEnded(err)
}

// failed ends the worker's connection when its poller fails.
func (w *httpWorker) failed(_ *poller, err error) { w.relayEnded(err) }
