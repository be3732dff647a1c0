package socket

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestManyConnections opens 10,000 connections from a child process (each
// process then holds 10,000 descriptors, within the usual limit), makes one
// call on each and leaves them idle: the server must hold no goroutine per
// connection, serve every call, and once the child closes them all release
// every connection and leave no goroutine behind (goleak at cleanup).
func TestManyConnections(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	f := start(t, "tcp", Config{MaxConnsPerIP: -1}, nil) // every connection comes from 127.0.0.1
	base := runtime.NumGoroutine()
	cmd := exec.Command(os.Args[0], "-test.run=^TestManyConnectionsChild$", "-test.v")
	cmd.Env = append(os.Environ(), "MCPWIRE_MANY_ADDR="+f.addr.String(), "MCPWIRE_MANY_N="+strconv.Itoa(n))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	ready := ""
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "ready ") || strings.HasPrefix(l, "failed ") {
			ready = l
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if ready != "ready "+strconv.Itoa(n) {
		t.Fatalf("child: %q", ready)
	}
	if open := f.srv.Stats().Open.Load(); open != int64(n) {
		t.Fatalf("Open = %d, want %d", open, n)
	}
	// The engine keeps idle workers for a while: at most as many as calls
	// ran at once (the child makes 64 at a time). Nothing is per connection.
	if g := runtime.NumGoroutine() - base; g > 200 {
		t.Fatalf("%d more goroutines with %d idle connections: the transport holds goroutines per connection", g, n)
	}
	if got := f.eng.Stats().Requests.Load(); got != uint64(n) {
		t.Fatalf("Requests = %d, want %d", got, n)
	}
	fmt.Fprintln(stdin, "close")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for f.srv.Stats().Open.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open after the peers closed", f.srv.Stats().Open.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManyConnectionsChild is the client side of TestManyConnections; it
// does nothing unless started by it.
func TestManyConnectionsChild(t *testing.T) {
	addr := os.Getenv("MCPWIRE_MANY_ADDR")
	if addr == "" {
		return // not the child
	}
	n, _ := strconv.Atoi(os.Getenv("MCPWIRE_MANY_N"))
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	work := make(chan int)
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for i := range work {
				c, err := net.Dial("tcp", addr)
				if err == nil {
					conns[i] = c
					_, err = fmt.Fprintf(c, "%s\n", req(strconv.Itoa(i), "tools/call", `"name":"echo","arguments":{"text":"hi"}`))
				}
				if err == nil {
					_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
					var k int
					k, err = c.Read(buf)
					if err == nil && !strings.Contains(string(buf[:k]), `"text":"hi"`) {
						err = fmt.Errorf("reply %q", buf[:k])
					}
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("connection %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		fmt.Println("failed", firstErr)
		return
	}
	fmt.Println("ready", n)
	bufio.NewScanner(os.Stdin).Scan()
	for _, c := range conns {
		c.Close()
	}
}
