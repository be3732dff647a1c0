//go:build !linux

package load

import (
	"errors"
	"time"
)

// canPoll: without epoll, relay connections are read by their own
// goroutine (see poll_linux.go for the poller).
const canPoll = false

var errNoPoll = errors.New("no poller on this system")

type poller struct{}

func (r *run) pollerFor(int) (*poller, error) { return nil, errNoPoll }
func (r *run) stopPollers()                   {}
func (p *poller) add(*streamConn) error       { return errNoPoll }

type fdConn struct{}

func (*fdConn) Write([]byte) (int, error) { return 0, errNoPoll }
func (*fdConn) closeWrite() error         { return errNoPoll }
func (*fdConn) closeBoth() error          { return errNoPoll }
func (*fdConn) close() error              { return errNoPoll }

func dialFD(string, string, time.Duration) (*fdConn, error) { return nil, errNoPoll }
