package streamhttp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// mountHandler is what the mount tests serve on /other: a buffered reply,
// a stream (flush, then more), a panic, and the principal it was given.
func mountHandler(release chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("mode") {
		case "stream":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, "data: one\n\n")
			if err := http.NewResponseController(w).Flush(); err != nil {
				return
			}
			<-release
			_, _ = io.WriteString(w, "data: two\n\n")
		case "panic":
			panic("mounted handler failed")
		case "principal":
			p, _ := PrincipalFrom(r.Context()).(string)
			_, _ = io.WriteString(w, "principal="+p)
		default:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Mounted", "yes")
			w.WriteHeader(201)
			_, _ = io.WriteString(w, r.Method+" "+string(body))
		}
	})
}

// Config.Mounts: another handler on another path of the same listener,
// with the listener's Origin and Host checks, on both front ends.
func TestMounts(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		release := make(chan struct{})
		h := startHarness(t, fe, Config{Mounts: map[string]http.Handler{"/other": mountHandler(release)}}, defaultOptions())
		resp, body := h.do(t, request{path: "/other", body: "hi"})
		if resp.StatusCode != 201 || string(body) != "POST hi" || resp.Header.Get("X-Mounted") != "yes" {
			t.Fatalf("buffered: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		if resp, _ := h.do(t, request{method: "GET", path: "/elsewhere"}); resp.StatusCode != 404 {
			t.Fatalf("unmounted path: %d", resp.StatusCode)
		}
		if resp, _ := h.do(t, request{path: "/other", hdr: []string{"Origin: http://evil.example"}}); resp.StatusCode != 403 {
			t.Fatalf("foreign Origin: %d", resp.StatusCode)
		}
		if resp, _ := h.do(t, request{path: "/other", host: "evil.example"}); resp.StatusCode != 403 {
			t.Fatalf("foreign Host: %d", resp.StatusCode)
		}
		if resp, _ := h.do(t, request{method: "GET", path: "/mcp"}); resp.StatusCode != 405 {
			t.Fatalf("the MCP path is unchanged: GET %d", resp.StatusCode)
		}
		if fe == fastFE {
			if resp, _ := h.do(t, request{method: "GET", path: "/other?mode=panic"}); resp.StatusCode != 500 {
				t.Fatalf("panic: %d", resp.StatusCode)
			}
		}
		// A stream: its headers and first event arrive before the
		// handler returns.
		c := h.dial(t)
		c.write(h.raw(request{method: "GET", path: "/other?mode=stream"}))
		resp, err := c.readResponse(5 * time.Second)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream: %v %v", resp, err)
		}
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		if err != nil || line != "data: one\n" {
			t.Fatalf("first event: %q %v", line, err)
		}
		close(release)
		rest, _ := io.ReadAll(br)
		if !strings.Contains(string(rest), "data: two") {
			t.Fatalf("rest of the stream: %q", rest)
		}
	})
}

// A mounted path is authenticated like the MCP path, and the handler gets
// the principal.
func TestMountAuthenticate(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		auth := func(_ context.Context, token string) (any, error) {
			if token == "" {
				return nil, ErrUnauthorized
			}
			return token, nil
		}
		h := startHarness(t, fe, Config{Authenticate: auth, Mounts: map[string]http.Handler{"/other": mountHandler(nil)}}, defaultOptions())
		if resp, _ := h.do(t, request{method: "GET", path: "/other?mode=principal"}); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("no token: %d %v", resp.StatusCode, resp.Header)
		}
		resp, body := h.do(t, request{method: "GET", path: "/other?mode=principal", hdr: []string{"Authorization: Bearer alice"}})
		if resp.StatusCode != 200 || string(body) != "principal=alice" {
			t.Fatalf("with a token: %d %q", resp.StatusCode, body)
		}
		if h.srv.Stats().Unauthorized.Load() != 1 {
			t.Fatal("refusal not counted")
		}
	})
}
