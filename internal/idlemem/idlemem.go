//go:build linux

// Package idlemem measures what idle streams hold in memory, in process:
// it opens n streams against a server on loopback, each from a bare
// socket (no Go object on the client side: a descriptor and nothing
// else), and reads the runtime's heap and stack figures before and after.
// The streamhttp package's listen stream and the fan-out comparison's raw
// SSE server (bench/servers/rawsse) are measured with it. Tests only.
package idlemem

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
)

// Result is what n open streams hold, per stream (bytes, except
// Goroutines).
type Result struct {
	N, GCEvery int // GCEvery: see Open
	// HeapAlloc and HeapInuse: live heap after two collections, less the
	// same before the first stream opened.
	HeapAlloc, HeapInuse float64
	// Stack: StackInuse after those collections (which shrink a parked
	// goroutine's stack to half while it uses less than a quarter), less
	// before. StackOpen: StackInuse as the last stream was acknowledged,
	// with no collection since the first opened: each stack as deep as it
	// grew, which is what the process's RSS keeps.
	Stack, StackOpen float64
	Goroutines       float64
}

func (r Result) String() string {
	return fmt.Sprintf("%d streams, collection every %d (0: off while opening): per stream heap %.0f B (in use %.0f), stack %.0f B as opened, %.0f B after GC, %.2f goroutines",
		r.N, r.GCEvery, r.HeapAlloc, r.HeapInuse, r.StackOpen, r.Stack, r.Goroutines)
}

// Idle is what an idle stream holds as the process's RSS keeps it, from
// two runs of Open: the larger live heap of the two, and the stacks as
// deep as they grew of the run without collections (nogc).
func Idle(gc, nogc Result) float64 { return max(gc.HeapAlloc, nogc.HeapAlloc) + nogc.StackOpen }

// Dial opens a TCP connection to addr (an IPv4 host:port) on a bare
// blocking socket with a receive timeout, and writes req on it.
func Dial(addr string, req []byte, timeout time.Duration) (int, error) {
	ap, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return -1, err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	sa := &syscall.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	tv := syscall.NsecToTimeval(timeout.Nanoseconds())
	if err = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err == nil {
		err = connect(fd, sa)
	}
	for p := req; err == nil && len(p) > 0; {
		var n int
		n, err = retry(func() (int, error) { return syscall.Write(fd, p) })
		p = p[min(max(n, 0), len(p)):]
	}
	if err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// The descriptors here are bare blocking sockets, whose calls a signal
// interrupts with EINTR (the runtime's own, SIGURG for preemption, among
// them): a receive on a socket with SO_RCVTIMEO is never restarted
// (signal(7)). The runtime's network poller retries them; so do these.

// retry runs a read or a write until it is not interrupted.
func retry(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// connect connects fd to sa. An interrupted connect goes on in the
// background (connect(2)): it is asked again until it reports done
// (EISCONN) or fails.
func connect(fd int, sa syscall.Sockaddr) error {
	err := syscall.Connect(fd, sa)
	for err == syscall.EINTR || err == syscall.EALREADY {
		if err == syscall.EALREADY {
			time.Sleep(time.Millisecond)
		}
		if err = syscall.Connect(fd, sa); err == syscall.EISCONN {
			return nil
		}
	}
	return err
}

// ReadUntil reads from fd into buf until what was read holds mark and,
// after it, an SSE event's end ("\n\n"); it returns what was read.
func ReadUntil(fd int, buf []byte, mark []byte) ([]byte, error) {
	n := 0
	for {
		if i := bytes.Index(buf[:n], mark); i >= 0 && bytes.Contains(buf[i:n], []byte("\n\n")) {
			return buf[:n], nil
		}
		if n == len(buf) {
			return buf[:n], errors.New("idlemem: buffer full before the mark")
		}
		m, err := retry(func() (int, error) { return syscall.Read(fd, buf[n:]) })
		if err != nil {
			return buf[:n], err
		}
		if m == 0 {
			return buf[:n], errors.New("idlemem: connection closed before the mark")
		}
		n += m
	}
}

// Open opens n streams with open (which returns once its stream is
// acknowledged, with the client's descriptor, or -1) and waits until live
// reports n on the server's side; it returns the measurement and the
// descriptors, which the caller closes (Close).
//
// gcEvery 0 turns collection off while the streams open, so that StackOpen
// sees every stack as deep as it grew. gcEvery k > 0 collects after every
// k streams instead, as a server's own collections would while streams
// keep arriving: what a stream pins of objects its server recycles in
// pools (which a collection empties) shows in HeapAlloc then, and
// StackOpen has stacks already shrunk.
func Open(n, gcEvery int, open func(i int) (int, error), live func() int) (Result, []int, error) {
	var m0, m1, mo runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	old := 0
	if gcEvery == 0 {
		old = debug.SetGCPercent(-1)
	}
	fds := make([]int, 0, n)
	var err error
	for i := 0; i < n && err == nil; i++ {
		var fd int
		if fd, err = open(i); fd >= 0 {
			fds = append(fds, fd)
		}
		if gcEvery > 0 && (i+1)%gcEvery == 0 {
			runtime.GC()
		}
	}
	if err == nil {
		err = WaitLive(live, n, 10*time.Second)
	}
	runtime.ReadMemStats(&mo)
	if gcEvery == 0 {
		debug.SetGCPercent(old)
	}
	if err != nil {
		return Result{}, fds, err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	g1 := runtime.NumGoroutine()
	per := func(a, b uint64) float64 { return (float64(b) - float64(a)) / float64(n) }
	return Result{
		N:          n,
		GCEvery:    gcEvery,
		HeapAlloc:  per(m0.HeapAlloc, m1.HeapAlloc),
		HeapInuse:  per(m0.HeapInuse, m1.HeapInuse),
		Stack:      per(m0.StackInuse, m1.StackInuse),
		StackOpen:  per(m0.StackInuse, mo.StackInuse),
		Goroutines: float64(g1-g0) / float64(n),
	}, fds, nil
}

// Close closes fds.
func Close(fds []int) {
	for _, fd := range fds {
		_ = syscall.Close(fd)
	}
}

// WaitLive waits until live reports want, for up to d.
func WaitLive(live func() int, want int, d time.Duration) error {
	for deadline := time.Now().Add(d); live() != want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("idlemem: %d streams live on the server, want %d", live(), want)
		}
	}
	return nil
}

// OpenListens is Open for n subscriptions/listen streams over HTTP/1.1 to
// the MCP endpoint /mcp at addr: stream i posts body(i) (the request's
// JSON) and counts as open once its acknowledgement has arrived.
func OpenListens(addr string, n, gcEvery int, body func(i int) string, live func() int) (Result, []int, error) {
	buf := make([]byte, 4096)
	mark := []byte("notifications/subscriptions/acknowledged")
	return Open(n, gcEvery, func(i int) (int, error) {
		b := body(i)
		req := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", addr, len(b), b)
		fd, err := Dial(addr, []byte(req), 10*time.Second)
		if err != nil {
			return -1, err
		}
		if _, err := ReadUntil(fd, buf, mark); err != nil {
			return fd, fmt.Errorf("stream %d: %v", i, err)
		}
		return fd, nil
	}, live)
}
