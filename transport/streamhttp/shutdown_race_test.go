package streamhttp

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestShutdownRightAfterServe: Shutdown called as soon as Serve has
// published its fasthttp server, possibly before fasthttp registered the
// listener, still makes Serve return (the listener is closed by Shutdown
// itself, not only by fasthttp).
func TestShutdownRightAfterServe(t *testing.T) {
	leakCheck(t)
	eng := benchEngine(t)
	for i := 0; i < 200; i++ {
		s := New(eng, Config{})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Serve(ln) }()
		for {
			s.mu.Lock()
			up := s.fast != nil
			s.mu.Unlock()
			if up {
				break
			}
			time.Sleep(10 * time.Microsecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Shutdown(ctx)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			ln.Close()
			<-done
			t.Fatalf("round %d: Serve still running 5 s after Shutdown", i)
		}
	}
}
