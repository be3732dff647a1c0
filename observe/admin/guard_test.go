package admin

import (
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// do sends a GET for path to base with the given Host header and
// Authorization values.
func do(t *testing.T, base, path, host string, auth ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHostCheck (F1): a request whose Host names neither loopback, the
// listener nor Config.AllowedHosts (DNS rebinding from a browser, the
// 0.0.0.0 route included) is answered 421 on every path, with nothing of
// the metrics, and counted; the listener's own names are served.
func TestHostCheck(t *testing.T) {
	leakCheck(t)
	a := New(Config{Gatherer: prometheus.NewRegistry(), AllowedHosts: []string{"Metrics.Internal"}, Pprof: true})
	base := start(t, a)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	for _, host := range []string{"evil.example", "evil.example:" + port, "0.0.0.0:" + port, "127.0.0.1.evil.example", "localhost.evil.example", "10.0.0.1"} {
		before := a.Stats().BadHost.Load()
		for _, path := range []string{"/metrics", "/debug/pprof/cmdline", "/healthz"} {
			if code, body := do(t, base, path, host); code != http.StatusMisdirectedRequest || strings.Contains(body, "mcpwire") || strings.Contains(body, "\x00") {
				t.Errorf("Host %q %s: %d %.100q, want 421", host, path, code, body)
			}
		}
		if got := a.Stats().BadHost.Load() - before; got != 3 {
			t.Errorf("Host %q: BadHost went up by %d, want 3", host, got)
		}
	}
	for _, host := range []string{"", "localhost:" + port, "LOCALHOST", "localhost.", "127.0.0.1:" + port, "127.0.0.2", "[::1]:" + port, "metrics.internal:9090"} {
		if code, _ := do(t, base, "/metrics", host); code != 200 {
			t.Errorf("Host %q: %d, want 200", host, code)
		}
	}
}

// TestToken (F1): with Config.Token every request but the probes needs
// exactly that bearer token (401 and counted otherwise); the probes need
// none.
func TestToken(t *testing.T) {
	leakCheck(t)
	a := New(Config{Gatherer: prometheus.NewRegistry(), Token: "s3cret-token", Pprof: true})
	base := start(t, a)
	for _, auth := range [][]string{nil, {"Bearer wrong"}, {"Bearer s3cret-toke"}, {"Basic s3cret-token"}, {"s3cret-token"},
		{"Bearer s3cret-token", "Bearer s3cret-token"}} {
		before := a.Stats().Unauthorized.Load()
		for _, path := range []string{"/metrics", "/debug/pprof/", "/nothing"} {
			if code, _ := do(t, base, path, "", auth...); code != 401 {
				t.Errorf("Authorization %q %s: %d, want 401", auth, path, code)
			}
		}
		if got := a.Stats().Unauthorized.Load() - before; got != 3 {
			t.Errorf("Authorization %q: Unauthorized went up by %d, want 3", auth, got)
		}
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		if code, _ := do(t, base, path, "", "Bearer s3cret-token"); code != 200 {
			t.Errorf("%s with the token: %d", path, code)
		}
		if code, _ := do(t, base, path, "", "bearer  s3cret-token "); code != 200 {
			t.Errorf("%s with the token, other spelling: %d", path, code)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := do(t, base, path, ""); code != 200 {
			t.Errorf("%s without the token: %d, want 200", path, code)
		}
	}
}

// TestPprof (F1, F10): /debug/pprof/ is off unless Config.Pprof, and its
// cmdline never shows a URL's password.
func TestPprof(t *testing.T) {
	leakCheck(t)
	off := start(t, New(Config{}))
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1"} {
		if code, _ := do(t, off, path, ""); code != 404 {
			t.Errorf("pprof off, %s: %d, want 404", path, code)
		}
	}
	args := os.Args
	os.Args = []string{"mcpwire", "serve", "--state", "redis://app:hunter2@10.0.0.5:6379/0", "--x=rediss://:hunter2@h"}
	defer func() { os.Args = args }()
	on := start(t, New(Config{Pprof: true}))
	code, body := do(t, on, "/debug/pprof/cmdline", "")
	if code != 200 || strings.Contains(body, "hunter2") || body != "mcpwire\x00serve\x00--state\x00redis://app:xxxxx@10.0.0.5:6379/0\x00--x=rediss://:xxxxx@h" {
		t.Errorf("cmdline: %d %q", code, body)
	}
}
