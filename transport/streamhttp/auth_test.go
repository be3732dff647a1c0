package streamhttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// slowAuth is an Authenticator that admits "good" at once and holds
// "slow" until its context ends, reporting the cause on ended.
func slowAuth(started chan<- struct{}, ended chan<- error) Authenticator {
	return func(ctx context.Context, token string) (any, error) {
		if token != "slow" {
			return "alice", nil
		}
		started <- struct{}{}
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, ErrUnauthorized
	}
}

// TestAuthenticateTimeout (F4): an authenticator that does not return is
// bounded by Config.AuthTimeout on both front ends, on the MCP endpoint
// and on a mount: its context ends, the request is answered 503 with
// Retry-After (a slow check is no verdict on the token) and counted in
// Stats.AuthTimeouts. Before, the context had no deadline and the request
// hung for as long as the authenticator did.
func TestAuthenticateTimeout(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		started, ended := make(chan struct{}, 4), make(chan error, 4)
		h := startHarness(t, fe, Config{Authenticate: slowAuth(started, ended), AuthTimeout: 50 * time.Millisecond,
			Mounts: map[string]http.Handler{"/other": mountHandler(nil)}}, defaultOptions())
		for _, path := range []string{"/mcp", "/other"} {
			before := h.srv.Stats().AuthTimeouts.Load()
			resp, body := h.do(t, request{path: path, hdr: append(append([]string{}, echoHdr...), "Authorization: Bearer slow"),
				body: fixture.ToolsCall("1", "echo", `{"text":"hi"}`)})
			<-started
			if cause := <-ended; !errors.Is(cause, errAuthTimeout) {
				t.Errorf("%s: the authenticator's context ended with %v, want errAuthTimeout", path, cause)
			}
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
				t.Fatalf("%s: status %d, Retry-After %q, want 503 and 1", path, resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			var m struct {
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil || m.Error.Code != -32603 {
				t.Errorf("%s: body %s, want a -32603 error", path, body)
			}
			if got := h.srv.Stats().AuthTimeouts.Load() - before; got != 1 {
				t.Errorf("%s: AuthTimeouts went up by %d, want 1", path, got)
			}
		}
		// A quick authenticator is unaffected.
		resp, _ := h.do(t, request{hdr: append(append([]string{}, echoHdr...), "Authorization: Bearer good"), body: fixture.ToolsCall("1", "echo", `{"text":"hi"}`)})
		if resp.StatusCode != 200 {
			t.Errorf("good token: %d", resp.StatusCode)
		}
	})
}

// TestAuthenticateClientGone (F4, HCAN-01): a client that closes its
// connection while its token is being checked cancels the check (long
// before AuthTimeout), and the request is counted as a disconnect. Before,
// fasthttp gave Authenticate context.Background() and net/http a context
// without its cancellation.
func TestAuthenticateClientGone(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		if fe == fastFE && runtime.GOOS != "linux" {
			t.Skip("the fasthttp front end learns of a disconnect by peeking the socket, on Linux only")
		}
		started, ended := make(chan struct{}, 4), make(chan error, 4)
		h := startHarness(t, fe, Config{Authenticate: slowAuth(started, ended), AuthTimeout: time.Hour,
			Mounts: map[string]http.Handler{"/other": mountHandler(nil)}}, defaultOptions())
		for _, r := range []request{
			{hdr: append(append([]string{}, echoHdr...), "Authorization: Bearer slow"), body: fixture.ToolsCall("1", "echo", `{"text":"hi"}`)},
			{method: "GET", path: "/other", hdr: []string{"Authorization: Bearer slow"}},
		} {
			before := h.srv.Stats().Disconnects.Load()
			c := h.dial(t)
			c.write(h.raw(r))
			<-started
			c.conn.Close()
			select {
			case cause := <-ended:
				if errors.Is(cause, errAuthTimeout) {
					t.Fatalf("%s: ended by the timeout, not by the client leaving", r.path)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the authenticator's context did not end when the client left", r.path)
			}
			deadline := time.Now().Add(5 * time.Second)
			for h.srv.Stats().Disconnects.Load()-before != 1 {
				if time.Now().After(deadline) {
					t.Fatalf("%s: Disconnects went up by %d, want 1", r.path, h.srv.Stats().Disconnects.Load()-before)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
}
