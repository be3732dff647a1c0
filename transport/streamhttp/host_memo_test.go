package streamhttp

import (
	"bytes"
	"testing"
)

// TestHostMemoEmpty: the Host a connection's last request was let
// through with is compared in admit before hostAllowed; a connection
// that has let none through remembers nothing (hostOK nil), so its first
// request with an empty Host is checked in full and refused (SEC-03,
// B7), as is one after an allowed Host. Fails when admit's compare
// takes a nil memo for an empty Host.
func TestHostMemoEmpty(t *testing.T) {
	s := New(typedEchoEngine(t), Config{})
	c, br := serveConnOf(t, s)
	// HTTP/1.0 without a Host line (fasthttp refuses an empty one),
	// kept alive.
	empty := bytes.Replace(wrkRequest, []byte("HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), []byte("HTTP/1.0\r\nConnection: keep-alive\r\n"), 1)
	for i, step := range []struct {
		req    []byte
		status int
	}{{empty, 403}, {wrkRequest, 200}, {empty, 403}, {wrkRequest, 200}} {
		resp, body := connRoundTrip(t, c, br, step.req)
		if resp.StatusCode != step.status {
			t.Fatalf("step %d: status %d %q, want %d", i, resp.StatusCode, body, step.status)
		}
	}
	if got := s.Stats().BadHost.Load(); got != 2 {
		t.Fatalf("BadHost %d, want 2", got)
	}
}
