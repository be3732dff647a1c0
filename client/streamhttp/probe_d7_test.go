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

// TestProbeNotTakenForLegacy (RELIABILITY D7, COMPAT-02): a server that
// answers the dual-era probe with 401, 403 or a 5xx, that does not answer
// within ProbeTimeout, or whose connection is cut twice is not taken for a
// legacy server: the error (carrying the HTTP status) reaches the caller,
// the era stays unknown, and no initialize or HTTP+SSE GET is sent. A
// connection cut once is probed again and the server found modern (issue
// 20). Only the "no answer" case uses a short ProbeTimeout: on a loaded
// machine a short one would turn a slow answer into a timeout.
func TestProbeNotTakenForLegacy(t *testing.T) {
	const discoverOK = `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`
	status := func(code int) func(int, http.ResponseWriter, *http.Request, <-chan struct{}) {
		return func(_ int, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			if code == 401 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			}
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(code)
			_, _ = io.WriteString(w, "refused")
		}
	}
	for _, tc := range []struct {
		name    string
		answer  func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) // n: the probe's attempt, from 1
		status  int                                                                       // the HTTP status the error carries, if any
		timeout time.Duration                                                             // ProbeTimeout
		okFrom  int                                                                       // the attempt answered with a DiscoverResult (0: none)
	}{
		{"401", status(401), 401, 5 * time.Second, 0},
		{"403", status(403), 403, 5 * time.Second, 0},
		{"500", status(500), 500, 5 * time.Second, 0},
		{"502", status(502), 502, 5 * time.Second, 0},
		{"503", status(503), 503, 5 * time.Second, 0},
		{"no-answer", func(_ int, _ http.ResponseWriter, r *http.Request, done <-chan struct{}) {
			select { // hold the request until the client gives up or the test ends
			case <-r.Context().Done():
			case <-done:
			}
		}, 0, 300 * time.Millisecond, 0},
		{"cut-twice", func(_ int, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) { cut(w) }, 0, 5 * time.Second, 0},
		// cut at the first attempt, answered at the second (below)
		{"cut-once", func(_ int, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) { cut(w) }, 0, 5 * time.Second, 2},
		// -32022 naming a mutual version, then cut once, then answered:
		// the version retry and the retry after a lost connection each
		// have their own budget (DISC-04, issue 20).
		{"32022-then-cut", func(n int, w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			if n == 1 {
				// A new connection for the next attempt: a cut on a
				// kept-alive one reads as a stale connection (not
				// delivered), which is another path.
				w.Header().Set("Connection", "close")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`)
				return
			}
			cut(w)
		}, 0, 5 * time.Second, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			done := make(chan struct{})
			var nmu sync.Mutex
			probes := 0
			ps := newProbeServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
				if method != "server/discover" {
					w.WriteHeader(400)
					return
				}
				nmu.Lock()
				probes++
				n := probes
				nmu.Unlock()
				if tc.okFrom != 0 && n >= tc.okFrom {
					w.Header().Set("Content-Type", "application/json")
					_, _ = io.WriteString(w, fmtID(discoverOK, id))
					return
				}
				tc.answer(n, w, r, done)
			})
			defer close(done)
			tr := dtDial(t, ps.srv.URL+"/mcp", Config{})
			c := mcpclient.New(tr, mcpclient.Config{ProbeTimeout: tc.timeout})
			_, err := c.Probe(dtCtx(t))
			seen := ps.requests()
			for _, r := range seen {
				if r != "POST server/discover" {
					t.Fatalf("requests %q: only server/discover may be sent", seen)
				}
			}
			if tc.okFrom != 0 {
				if err != nil || c.Era() != mcpclient.EraModern || len(seen) != tc.okFrom {
					t.Fatalf("probe: %v, era %v after %v", err, c.Era(), seen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "not taken as a legacy server") {
				t.Fatalf("probe: %v; want the probe's error, not a legacy fallback", err)
			}
			var se *mcpclient.StatusError
			if tc.status != 0 && (!errors.As(err, &se) || se.Status != tc.status) {
				t.Errorf("error %v does not carry HTTP %d", err, tc.status)
			}
			if c.Era() != mcpclient.EraUnknown {
				t.Errorf("era %v, want unknown", c.Era())
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
	c := mcpclient.New(tr, mcpclient.Config{ProbeTimeout: 5 * time.Second})
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

// cut closes the connection without an answer.
func cut(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func fmtID(format string, id json.RawMessage) string {
	b := []byte(nil)
	for i := 0; i < len(format); i++ {
		if format[i] == '%' && i+1 < len(format) && format[i+1] == 's' {
			b = append(b, id...)
			i++
			continue
		}
		b = append(b, format[i])
	}
	return string(b)
}
