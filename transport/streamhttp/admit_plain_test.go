package streamhttp

import (
	"bytes"
	"context"
	"testing"
)

// TestAdmitPlainAfterHost: serve lets a request through without calling
// admit only when admit would pass it with no principal; a Host the
// connection already let through does not skip the other checks. On one
// keep-alive connection, after a request was admitted: a request without
// a token is refused when Authenticate is set (401), and every request is
// refused once the server is closing (503). Fails when serve's shortcut
// drops its Authenticate or closing test.
func TestAdmitPlainAfterHost(t *testing.T) {
	t.Run("authenticate", func(t *testing.T) {
		auth := func(_ context.Context, token string) (any, error) {
			if token != "good" {
				return nil, ErrUnauthorized
			}
			return "caller", nil
		}
		s := New(typedEchoEngine(t), Config{Authenticate: auth})
		c, br := serveConnOf(t, s)
		withToken := bytes.Replace(wrkRequest, []byte("Host: 127.0.0.1:8080\r\n"), []byte("Host: 127.0.0.1:8080\r\nAuthorization: Bearer good\r\n"), 1)
		for i, step := range []struct {
			req    []byte
			status int
		}{{withToken, 200}, {wrkRequest, 401}, {withToken, 200}, {wrkRequest, 401}} {
			resp, body := connRoundTrip(t, c, br, step.req)
			if resp.StatusCode != step.status {
				t.Fatalf("step %d: status %d %q, want %d", i, resp.StatusCode, body, step.status)
			}
		}
	})
	t.Run("closing", func(t *testing.T) {
		s := New(typedEchoEngine(t), Config{})
		c, br := serveConnOf(t, s)
		if resp, body := connRoundTrip(t, c, br, wrkRequest); resp.StatusCode != 200 {
			t.Fatalf("first request: status %d %q, want 200", resp.StatusCode, body)
		}
		// What Shutdown sets first; the listener stays open, so the
		// connection's next request reaches the checks.
		s.closing.Store(true)
		resp, body := connRoundTrip(t, c, br, wrkRequest)
		if resp.StatusCode != 503 || !bytes.Equal(body, bodyShuttingDown) {
			t.Fatalf("closing: status %d %q, want 503 %q", resp.StatusCode, body, bodyShuttingDown)
		}
		if got := s.Stats().ShuttingDown.Load(); got != 1 {
			t.Fatalf("ShuttingDown %d, want 1", got)
		}
	})
}
