package streamhttp

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
	httpserver "github.com/mcpwire/mcpwire/transport/streamhttp"
)

// The tests of this package dial the server of this repository
// (transport/streamhttp) through its public API, on loopback, behind
// either of its front ends; wire-level cases use the scripted servers of
// dial_wire_test.go instead.

// frontEnd names one of the server's two HTTP front ends.
type frontEnd string

const (
	fastFE frontEnd = "fasthttp" // Server.Serve on a TCP listener
	netFE  frontEnd = "nethttp"  // Server.Handler behind an http.Server
)

func leakCheck(t *testing.T) { fixture.LeakCheck(t) }

func waitFor(t *testing.T, ch chan string, want string, d time.Duration) bool {
	t.Helper()
	return fixture.WaitFor(t, ch, want, d)
}

// forEachFrontEnd runs f as one subtest per front end, each with its own
// leak check.
func forEachFrontEnd(t *testing.T, f func(t *testing.T, fe frontEnd)) {
	for _, fe := range []frontEnd{fastFE, netFE} {
		t.Run(string(fe), func(t *testing.T) {
			leakCheck(t)
			f(t, fe)
		})
	}
}

// server is one transport/streamhttp server with the fixture's tools.
type server struct {
	eng  *engine.Server
	srv  *httpserver.Server
	fx   *fixture.Fixture
	addr string // host:port to dial
	hs   *http.Server
	done chan error
	stop sync.Once
}

// startServer serves a fresh engine with the fixture's tools behind fe on
// a loopback listener; it is shut down at cleanup.
func startServer(t *testing.T, fe frontEnd) *server {
	t.Helper()
	eng := engine.New(engine.Config{Name: "ExampleServer", Version: "1.0.0"})
	s := &server{eng: eng, fx: fixture.Add(t, eng), srv: httpserver.New(eng, httpserver.Config{}), done: make(chan error, 1)}
	switch fe {
	case fastFE:
		ln, err := s.srv.Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.addr = ln.Addr().String()
		go func() { s.done <- s.srv.Serve(ln) }()
	case netFE:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.addr = ln.Addr().String()
		hd, err := s.srv.Handler(s.addr)
		if err != nil {
			t.Fatal(err)
		}
		s.hs = &http.Server{Handler: hd, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0), ConnContext: s.srv.ConnContext}
		go func() {
			err := s.hs.Serve(s.srv.NetListener(ln))
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			s.done <- err
		}()
	}
	waitServing(t, s.addr)
	t.Cleanup(func() { _ = s.shutdown(5 * time.Second) })
	return s
}

// waitServing returns once addr answers an HTTP request (any status): the
// server is then serving, and Shutdown finds it.
func waitServing(t testing.TB, addr string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	for deadline := time.Now().Add(5 * time.Second); ; {
		resp, err := hc.Get("http://" + addr + "/")
		if err == nil {
			_ = resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server at %s does not answer: %v", addr, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// shutdown releases blocked handlers, shuts the server and the engine down
// and waits for the serve goroutine.
func (s *server) shutdown(d time.Duration) (err error) {
	s.stop.Do(func() {
		s.fx.ReleaseAll()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		err = s.srv.Shutdown(ctx)
		if s.hs != nil {
			_ = s.hs.Shutdown(ctx)
		}
		<-s.done
		_ = s.eng.Shutdown(ctx)
	})
	return err
}
