//go:build unix

package socket

import (
	"os"
	"syscall"
	"testing"
)

// setRecvBuffer sets a socket's receive buffer (SO_RCVBUF) to n bytes.
func setRecvBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}

// TestUnixSocketMode (F3): a Unix socket file is created for its owner
// only (0600) unless Config.UnixMode says otherwise, whatever the process
// umask: here none at all, under which bind alone gives 0777 (anyone on
// the machine may connect).
func TestUnixSocketMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		cfg  Config
		want os.FileMode
	}{
		{Config{}, 0o600},
		{Config{UnixMode: 0o660, InsecureNoAuth: true}, 0o660},
		{Config{UnixMode: 0o400}, 0o400},
	} {
		func() {
			f := start(t, "unix", tc.cfg, nil)
			defer f.shutdown()
			fi, err := os.Stat(f.addr.String())
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tc.want {
				t.Errorf("UnixMode %v: the socket file has mode %v, want %v", tc.cfg.UnixMode, got, tc.want)
			}
			if tc.want&0o200 != 0 {
				f.dial().send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`) // the owner can connect
			}
		}()
	}
	// The umask is given back.
	if now := syscall.Umask(0); now != 0 {
		t.Errorf("the umask is %o after Start, want 0 as set", now)
	}
}
