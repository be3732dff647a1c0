//go:build linux

package idlemem

import (
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReadUntilInterrupted: a signal that interrupts ReadUntil's blocking
// receive (SO_RCVTIMEO set by Dial: never restarted, EINTR) does not end
// the read; it goes on until the mark arrives. The reading goroutine is
// pinned to its thread, and SIGURG (the runtime's preemption signal,
// which the process handles) is sent to that thread while the server
// holds its answer back. A CI run of round 19 failed on this (rawsse's
// TestIdleStreamBytes: "stream 566: interrupted system call"). Fails when
// the read gives up on EINTR.
func TestReadUntilInterrupted(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answer := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64)
		_, _ = c.Read(buf)
		<-answer
		_, _ = c.Write([]byte("data: mark\n\n"))
	})
	type out struct {
		got []byte
		err error
	}
	tid := make(chan int, 1)
	res := make(chan out, 1)
	wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd, err := Dial(ln.Addr().String(), []byte("GET / HTTP/1.1\r\n\r\n"), 10*time.Second)
		if err != nil {
			tid <- -1
			res <- out{err: err}
			return
		}
		defer syscall.Close(fd)
		tid <- syscall.Gettid()
		got, err := ReadUntil(fd, make([]byte, 256), []byte("mark"))
		res <- out{got, err}
	})
	th := <-tid
	if th > 0 {
		// The reader is in its receive (or about to be): interrupt it
		// again and again before the answer comes.
		for range 50 {
			_ = syscall.Tgkill(syscall.Getpid(), th, syscall.SIGURG)
			time.Sleep(2 * time.Millisecond)
		}
	}
	close(answer)
	r := <-res
	if r.err != nil {
		t.Fatalf("ReadUntil: %v", r.err)
	}
	if string(r.got) != "data: mark\n\n" {
		t.Fatalf("read %q", r.got)
	}
}
