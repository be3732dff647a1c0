package streamhttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// TestProbeNotTakenForLegacy: the version probe against a server that
// answers 401, 403 or a 5xx, that does not answer in time, or whose
// connection is cut twice fails with that error; the client never falls
// back to initialize (RELIABILITY D7, COMPAT-02). A connection cut once
// is probed again and the server found modern (issue 20).
func TestProbeNotTakenForLegacy(t *testing.T) {
	const discoverOK = `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`
	for _, tc := range []struct {
		name   string
		answer func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) // n: the probe's attempt, from 1
		modern bool
	}{
		{"401", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) { w.WriteHeader(401) }, false},
		{"403", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) { w.WriteHeader(403) }, false},
		{"500", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) { w.WriteHeader(500) }, false},
		{"503", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) { w.WriteHeader(503) }, false},
		{"timeout", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
			select { // no answer until the test ends
			case <-r.Context().Done():
			case <-done:
			}
		}, false},
		{"cut-twice", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) { cut(w) }, false},
		{"cut-once", func(n int, w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
			if n == 1 {
				cut(w)
				return
			}
			var m struct{ ID json.RawMessage }
			_ = json.NewDecoder(r.Body).Decode(&m)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, fmtID(discoverOK, m.ID))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			done := make(chan struct{})
			var mu sync.Mutex
			var methods []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				methods = append(methods, r.Header.Get("Mcp-Method"))
				n := len(methods)
				mu.Unlock()
				if r.Header.Get("Mcp-Method") != "server/discover" {
					w.WriteHeader(400)
					return
				}
				tc.answer(n, w, r, done)
			}))
			defer srv.Close()
			defer close(done)
			tr := dtDial(t, srv.URL+"/mcp", Config{})
			c := mcpclient.New(tr, mcpclient.Config{ProbeTimeout: 300 * time.Millisecond})
			_, err := c.Probe(dtCtx(t))
			mu.Lock()
			seen := append([]string(nil), methods...)
			mu.Unlock()
			for _, m := range seen {
				if m != "server/discover" {
					t.Fatalf("the client went on with %q after the probe: %v", m, seen)
				}
			}
			if tc.modern {
				if err != nil || c.Era() != mcpclient.EraModern || len(seen) != 2 {
					t.Fatalf("probe: %v, era %v after %v", err, c.Era(), seen)
				}
				return
			}
			if err == nil || c.Era() == mcpclient.Era2025 || c.Era() == mcpclient.Era2024 {
				t.Fatalf("probe: %v, era %v: taken for a legacy server", err, c.Era())
			}
		})
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
