//go:build !linux

package load

import (
	"errors"
	"io"
	"os/exec"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// canPoll: without epoll, relay connections are read by their own
// goroutine (see poll_linux.go for the poller).
const canPoll = false

var errNoPoll = errors.New("no poller on this system")

type poller struct{}

func (r *run) pollerFor(int) (*poller, error)           { return nil, errNoPoll }
func (r *run) stopPollers()                             {}
func (p *poller) add(int32, *fdConn, pollConn) error    { return errNoPoll }
func (p *poller) remove(int32, *fdConn)                 {}
func (w *httpWorker) readable(*poller, *codec.Envelope) {}
func (w *httpWorker) failed(*poller, error)             {}
func (c *streamConn) readable(*poller, *codec.Envelope) {}
func (c *streamConn) failed(*poller, error)             {}

type pollConn interface {
	readable(p *poller, env *codec.Envelope)
	failed(p *poller, err error)
}

type fdConn struct{}

func (*fdConn) Write([]byte) (int, error) { return 0, errNoPoll }
func (*fdConn) read([]byte) (int, error)  { return 0, errNoPoll }
func (*fdConn) closeWrite() error         { return errNoPoll }
func (*fdConn) closeBoth() error          { return errNoPoll }
func (*fdConn) close() error              { return errNoPoll }

func dialFD(string, string, time.Duration) (*fdConn, error) { return nil, errNoPoll }

type fdReader struct{ f *fdConn }

func (fdReader) Read([]byte) (int, error) { return 0, errNoPoll }

// blockingPipes: the caller falls back to cmd.StdinPipe and StdoutPipe.
func blockingPipes(*exec.Cmd) (io.WriteCloser, io.ReadCloser, func(), error) {
	return nil, nil, nil, errNoPoll
}
