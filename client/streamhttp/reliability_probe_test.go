package streamhttp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// probeServer is an HTTP server on loopback that records each request
// ("POST server/discover", "GET") and answers with answer.
type probeServer struct {
	mu   sync.Mutex
	seen []string
	srv  *httptest.Server
}

func newProbeServer(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage)) *probeServer {
	t.Helper()
	ps := &probeServer{}
	ps.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		ps.mu.Lock()
		ps.seen = append(ps.seen, strings.TrimSpace(r.Method+" "+m.Method))
		ps.mu.Unlock()
		answer(w, r, m.Method, m.ID)
	}))
	t.Cleanup(ps.srv.Close)
	return ps
}

func (ps *probeServer) requests() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]string(nil), ps.seen...)
}

// TestProbeNotLegacyOnAuth5xxTimeout (RELIABILITY D7, COMPAT-02): a server
// that answers the dual-era probe with 401, 403, a 5xx, or not at all
// within ProbeTimeout is not taken for a legacy server: the error reaches
// the caller, the era stays unknown, and no initialize or HTTP+SSE GET is
// sent.
func TestProbeNotLegacyOnAuth5xxTimeout(t *testing.T) {
	leakCheck(t)
	for _, status := range []int{401, 403, 500, 502, 503, 0} {
		name := http.StatusText(status)
		if status == 0 {
			name = "no answer"
		}
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			ps := newProbeServer(t, func(w http.ResponseWriter, r *http.Request, _ string, _ json.RawMessage) {
				if status == 0 {
					select { // hold the request until the client gives up or the test ends
					case <-r.Context().Done():
					case <-release:
					}
					return
				}
				if status == 401 {
					w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
				}
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, "refused")
			})
			defer close(release)
			tr := dtDial(t, ps.srv.URL+"/mcp", Config{})
			c := mcpclient.New(tr, mcpclient.Config{ProbeTimeout: 300 * time.Millisecond})
			_, err := c.ListTools(dtCtx(t))
			if err == nil || !strings.Contains(err.Error(), "not taken as a legacy server") {
				t.Fatalf("ListTools: %v; want the probe's error, not a legacy fallback", err)
			}
			var se *mcpclient.StatusError
			if status != 0 && (!errors.As(err, &se) || se.Status != status) {
				t.Errorf("error %v does not carry HTTP %d", err, status)
			}
			if c.Era() != mcpclient.EraUnknown {
				t.Errorf("era %v, want unknown", c.Era())
			}
			for _, r := range ps.requests() {
				if r != "POST server/discover" {
					t.Errorf("requests %q: only server/discover may be sent", ps.requests())
					break
				}
			}
		})
	}
}

// TestProbe404HTML (RELIABILITY D8, COMPAT-04): a proxy in front of the
// server answers 404 with an HTML page. That is not-modern only because
// the body carries no modern JSON-RPC error: the client falls back to
// initialize and then to the HTTP+SSE GET, and when those fail the same
// way the caller gets one clear error naming the 404, not a hang or a
// half-set-up legacy session.
func TestProbe404HTML(t *testing.T) {
	leakCheck(t)
	ps := newProbeServer(t, func(w http.ResponseWriter, _ *http.Request, _ string, _ json.RawMessage) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(404)
		_, _ = io.WriteString(w, "<html><body><h1>404 Not Found</h1></body></html>")
	})
	tr := dtDial(t, ps.srv.URL+"/mcp", Config{})
	c := mcpclient.New(tr, mcpclient.Config{ProbeTimeout: 2 * time.Second})
	_, err := c.ListTools(dtCtx(t))
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("ListTools: %v; want an error naming the 404", err)
	}
	if c.Era() == mcpclient.EraModern {
		t.Errorf("era modern from a 404 with no JSON-RPC body")
	}
	got := strings.Join(ps.requests(), ", ")
	if !strings.HasPrefix(got, "POST server/discover, POST initialize") || !strings.Contains(got, "GET") || strings.Count(got, "server/discover") != 1 {
		t.Errorf("requests %s; want server/discover, then initialize, then the HTTP+SSE GET", got)
	}
}
