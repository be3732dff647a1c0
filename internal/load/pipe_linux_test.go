//go:build linux

package load

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blockingPipe returns a pipeReader on a new blocking pipe and its write end.
func blockingPipe(t *testing.T) (*pipeReader, int) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return &pipeReader{fd: fds[0]}, fds[1]
}

// readResult runs one Read of p on another goroutine.
func readResult(p *pipeReader, b []byte) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := p.Read(b)
		done <- err
	}()
	return done
}

// TestPipeReaderCloseWakesRead: a Read blocked on a pipe whose writer
// (a grandchild of the server) neither writes nor closes returns
// os.ErrClosed once Close is called, without handing over Close's byte.
func TestPipeReaderCloseWakesRead(t *testing.T) {
	p, w := blockingPipe(t)
	defer unix.Close(w)
	done := readResult(p, make([]byte, 64))
	select {
	case err := <-done:
		t.Fatalf("Read returned %v with nothing written", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Read after Close: %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the blocked Read")
	}
	if _, err := p.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Read: %v, want os.ErrClosed", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestPipeReaderDataThenEOF: data comes out as written, then the end of
// the pipe as io.EOF, then os.ErrClosed.
func TestPipeReaderDataThenEOF(t *testing.T) {
	p, w := blockingPipe(t)
	if _, err := unix.Write(w, []byte("abc\n")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64)
	n, err := p.Read(b)
	if err != nil || string(b[:n]) != "abc\n" {
		t.Fatalf("Read = %q, %v", b[:n], err)
	}
	unix.Close(w)
	if _, err := p.Read(b); err != io.EOF {
		t.Fatalf("Read at the end: %v, want io.EOF", err)
	}
	if _, err := p.Read(b); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after the end: %v, want os.ErrClosed", err)
	}
}

// TestPipeReaderCloseAfterEndTouchesNothing: once the reader has closed
// its descriptor, the number may name another file; Close must not write
// its wake-up byte there.
func TestPipeReaderCloseAfterEndTouchesNothing(t *testing.T) {
	p, w := blockingPipe(t)
	fd := p.fd
	unix.Close(w)
	if _, err := p.Read(make([]byte, 8)); err != io.EOF {
		t.Fatalf("Read: %v, want io.EOF", err)
	}
	var other [2]int
	if err := unix.Pipe2(other[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(other[0])
	defer unix.Close(other[1])
	if other[0] != fd && other[1] != fd {
		t.Logf("descriptor %d not reused (%v); the check below still holds", fd, other)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := unix.Read(other[0], make([]byte, 8)); err != unix.EAGAIN {
		t.Fatalf("another pipe got %d bytes (%v) from Close", n, err)
	}
}

// TestStdioWithoutProcFD: where a pipe's write end cannot be opened again
// (no /proc), the run uses os/exec's pipes and still works.
func TestStdioWithoutProcFD(t *testing.T) {
	old := procFD
	procFD = "/nonexistent/fd/"
	defer func() { procFD = old }()
	res, log := runLoadLog(t, Config{Target: fakeStdioTarget(t), Inflight: 8, Requests: 500})
	if len(res.Errors) != 0 || res.Requests != 500 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if log != "" {
		t.Errorf("log: %s", log)
	}
}

// TestWakeReaderBounded: when the blocked reader cannot be woken (no
// descriptor to open a write end with: Close fails), wakeReader retries
// for a bounded time and returns the error instead of waiting for the
// read forever; a failure that passes (a descriptor freed meanwhile)
// wakes the reader after all.
func TestWakeReaderBounded(t *testing.T) {
	oldFD, oldTries, oldWait := procFD, wakeTries, wakeWait
	defer func() { procFD, wakeTries, wakeWait = oldFD, oldTries, oldWait }()
	wakeTries, wakeWait = 3, 10*time.Millisecond

	read := func(p *pipeReader) chan struct{} {
		dead := make(chan struct{})
		go func() {
			_, _ = p.Read(make([]byte, 64))
			close(dead)
		}()
		return dead
	}

	t.Run("close_reports", func(t *testing.T) {
		// pipeReader.Close returns the error when it cannot open the
		// write end, so that wakeReader knows the read was not woken.
		p, w := blockingPipe(t)
		defer unix.Close(w)
		procFD = "/nonexistent/fd/"
		err := p.Close()
		procFD = oldFD
		if err == nil {
			t.Fatal("Close = nil without a write end to wake the reader with")
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Read(make([]byte, 8)); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Read after Close = %v, want os.ErrClosed", err)
		}
	})
	t.Run("gives_up", func(t *testing.T) {
		res := make(chan error, 1)
		go func() { res <- wakeReader(&failingCloser{fails: 1 << 30}, make(chan struct{})) }()
		select {
		case err := <-res:
			if err == nil {
				t.Fatal("wakeReader = nil with the reader never woken")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("wakeReader still waiting after 5 s for a reader it could not wake")
		}
	})
	t.Run("retry_wakes", func(t *testing.T) {
		p, w := blockingPipe(t)
		defer unix.Close(w)
		dead := read(p)
		c := &failingCloser{fails: 2, c: p}
		if err := wakeReader(c, dead); err != nil {
			t.Fatalf("wakeReader = %v once the reader could be woken", err)
		}
		select {
		case <-dead:
		default:
			t.Fatal("wakeReader returned with the reader still blocked")
		}
		if c.calls != 3 {
			t.Fatalf("Close called %d times, want 3 (two failures, then the wake)", c.calls)
		}
	})
}

// failingCloser fails its first fails calls, then closes c.
type failingCloser struct {
	fails, calls int
	c            io.Closer
}

func (f *failingCloser) Close() error {
	f.calls++
	if f.calls <= f.fails {
		return errors.New("too many open files")
	}
	return f.c.Close()
}
