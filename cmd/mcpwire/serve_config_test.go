package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// TestServeHelpDefaults: every default serve's help states for a limit,
// "(0: X)" or "of X or more", reads back as the library constant the flag
// falls back to, so that a changed constant cannot leave the help stale;
// a flag that states one the test does not know fails it too.
func TestServeHelpDefaults(t *testing.T) {
	fs := newServeFlagSet(new(serveFlags))
	want := map[string]any{
		"max-body":          streamhttp.DefaultMaxBodyBytes,
		"max-header":        streamhttp.DefaultMaxHeaderBytes,
		"max-conns-per-ip":  streamhttp.DefaultMaxConnsPerIP,
		"max-conns":         streamhttp.DefaultMaxConns,
		"keepalive":         streamhttp.DefaultKeepAlive,
		"compress":          streamhttp.DefaultCompressMinBytes,
		"max-socket-conns":  socket.DefaultMaxConns,
		"max-line":          framing.DefaultMaxLine,
		"progress-interval": engine.DefaultProgressInterval,

		"max-listens-per-principal":   engine.DefaultMaxListensPerPrincipal,
		"max-in-flight-per-principal": engine.DefaultMaxInFlightPerPrincipal,
		"max-sessions-per-principal":  legacy.DefaultMaxSessionsPerPrincipal,
		"max-sessions-per-ip":         legacy.DefaultMaxSessionsPerIP,
	}
	// event-loops states the rule of socket.DefaultEventLoops, a function
	// of GOMAXPROCS, not a constant.
	formula := map[string]string{"event-loops": "GOMAXPROCS-1, at least 1"}
	stated := regexp.MustCompile(`\(0: ([^;)]+)[;)]|replies of ([^ ]+ [^ ]+) or more`)
	seen := map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) {
		m := stated.FindStringSubmatch(fl.Usage)
		if m == nil {
			return
		}
		seen[fl.Name] = true
		text := m[1] + m[2]
		if f, ok := formula[fl.Name]; ok {
			if text != f {
				t.Errorf("--%s states %q, want %q", fl.Name, text, f)
			}
			return
		}
		w, ok := want[fl.Name]
		if !ok {
			t.Errorf("--%s states a default (%q) this test does not check", fl.Name, text)
			return
		}
		if m[1] != "" && fl.DefValue != "0" && fl.DefValue != "0s" {
			t.Errorf("--%s documents what 0 means but defaults to %s", fl.Name, fl.DefValue)
		}
		if got, err := parseStated(text, w); err != nil || got != w {
			t.Errorf("--%s states %q (%v), the constant is %v", fl.Name, text, err, w)
		}
	})
	for name := range want {
		if !seen[name] {
			t.Errorf("--%s states no default", name)
		}
	}
	// Defaults that are the flag's own value are printed by package flag.
	for name, w := range map[string]string{"grace": stdio.DefaultGrace.String(), "path": streamhttp.DefaultPath} {
		if got := fs.Lookup(name).DefValue; got != w {
			t.Errorf("--%s defaults to %q, the constant is %q", name, got, w)
		}
	}
}

// parseStated reads a default as the help writes it ("4 MiB", "16 KiB",
// "1000 bytes", "1024", "15s"), as the type of like.
func parseStated(s string, like any) (any, error) {
	if _, ok := like.(time.Duration); ok {
		return time.ParseDuration(s)
	}
	num, unit, _ := strings.Cut(s, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		return nil, err
	}
	switch unit {
	case "MiB":
		n <<= 20
	case "KiB":
		n <<= 10
	case "", "bytes":
	default:
		return nil, fmt.Errorf("unit %q", unit)
	}
	return n, nil
}

func TestSizeString(t *testing.T) {
	for n, want := range map[int]string{4 << 20: "4 MiB", 16 << 10: "16 KiB", 1000: "1000 bytes", 1536: "1536 bytes", 0: "0 bytes"} {
		if got := sizeString(n); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestServeConfig: the flags reach the transports' configurations, and
// --max-body and --max-line reach the legacy endpoint too (on HTTP and on
// stdio); without flags every limit is 0, each library's default.
func TestServeConfig(t *testing.T) {
	t.Setenv(mrtr.KeysEnv, "")
	f := parseServeFlags([]string{"--stdio", "--stdio-legacy", "--http", "127.0.0.1:0", "--legacy-path", "/old",
		"--tcp", "127.0.0.1:0", "--max-body", "1234", "--max-line", "5678", "--max-header", "9000",
		"--max-conns", "7", "--max-conns-per-ip", "3", "--max-socket-conns", "5", "--keepalive", "2s",
		"--event-loops", "2", "--grace", "3s", "--progress-interval", "-1s", "--allow-origins", "none",
		"--max-listens-per-principal", "4", "--max-in-flight-per-principal", "-1", "--rate-per-principal", "2.5",
		"--rate-burst", "6", "--max-sessions-per-principal", "8", "--max-sessions-per-ip", "9"})
	c, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	h, s := c.http.cfg, c.sockets.cfg
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"http MaxBodyBytes", h.MaxBodyBytes, 1234},
		{"http MaxHeaderBytes", h.MaxHeaderBytes, 9000},
		{"http MaxConns", h.MaxConns, 7},
		{"http MaxConnsPerIP", h.MaxConnsPerIP, 3},
		{"http KeepAlive", h.KeepAlive, 2 * time.Second},
		{"http AllowedOrigins", len(h.AllowedOrigins), 0},
		{"legacy MaxBodyBytes", c.legacy.MaxBodyBytes, 1234},
		{"legacy MaxLine", c.legacy.MaxLine, 5678},
		{"stdio MaxLine", c.stdio.MaxLine, 5678},
		{"stdio Grace", c.stdio.Grace, 3 * time.Second},
		{"socket MaxLine", s.MaxLine, 5678},
		{"socket MaxConns", s.MaxConns, 5},
		{"socket EventLoops", s.EventLoops, 2},
		{"progress", c.ref.ProgressInterval, -time.Second},
		{"legacy fixtures", c.ref.Legacy, true},
		{"stdio legacy", c.stdioLegacy, true},
		{"state signer", c.ref.State != nil && c.ref.State == c.admin.mrtr, true},
		{"listens per principal", c.ref.MaxListensPerPrincipal, 4},
		{"in flight per principal", c.ref.MaxInFlightPerPrincipal, -1},
		{"rate per principal", c.ref.RatePerPrincipal, 2.5},
		{"rate burst", c.ref.RateBurst, 6},
		{"legacy sessions per principal", c.legacy.MaxSessionsPerPrincipal, 8},
		{"legacy sessions per IP", c.legacy.MaxSessionsPerIP, 9},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if h.AllowedOrigins == nil {
		t.Error("--allow-origins none is not the empty list")
	}
	d, err := parseServeFlags([]string{"--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"}).config()
	if err != nil {
		t.Fatal(err)
	}
	if h, s, l := d.http.cfg, d.sockets.cfg, d.legacy; h.MaxBodyBytes != 0 || h.MaxHeaderBytes != 0 || h.MaxConns != 0 ||
		h.MaxConnsPerIP != 0 || h.KeepAlive != 0 || s.MaxLine != 0 || s.MaxConns != 0 || l.MaxBodyBytes != 0 || l.MaxLine != 0 ||
		d.stdio != nil || h.AllowedOrigins != nil {
		t.Errorf("defaults: http %+v, socket %+v, legacy %+v, stdio %v", h, s, l, d.stdio)
	}
}

// TestServeLegacyLimits: `serve --max-body` bounds the --legacy-path
// endpoint's POST bodies and `serve --max-line` the lines of a
// --stdio-legacy connection, as they bound the modern transports: a
// message at the limit is served, one byte more is refused. On HTTP the
// limit is raised past the legacy default: lowering it alone would pass
// without the wiring, the listener's own body limit covering the mount.
// That listener refuses one byte more as soon as it reads the headers,
// and closes: the client may then see its write cut instead of the 413.
func TestServeLegacyLimits(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		const max = framing.DefaultMaxLine + 1024
		addr := freeAddr(t)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join([]string{"serve", "--http", addr,
			"--legacy-path", "/old", "--max-body", strconv.Itoa(max), "--log-level", "warn"}, "\x1f"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}()
		dialRetry(t, "tcp", addr).Close()
		const cut = -1 // the server closed while the body was being sent
		post := func(body, session string) (int, string) {
			t.Helper()
			req, _ := http.NewRequest("POST", "http://"+addr+"/old", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			resp, err := http.DefaultClient.Do(req)
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
				return cut, ""
			}
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
		}
		code, session := post(legacyInit(t, 0), "")
		if code != 200 || session == "" {
			t.Fatalf("initialize: %d, session %q", code, session)
		}
		for _, tc := range []struct{ size, status int }{{max, 200}, {max + 1, 413}} {
			if code, _ := post(legacyEcho(t, tc.size), session); code != tc.status && !(tc.status == 413 && code == cut) {
				t.Errorf("a %d-byte tools/call under --max-body %d: %d, want %d", tc.size, max, code, tc.status)
			}
		}
	})
	t.Run("stdio", func(t *testing.T) {
		const max = 2048
		for _, tc := range []struct {
			size int
			ok   bool
		}{{max, true}, {max + 1, false}} {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join([]string{"serve", "--stdio", "--stdio-legacy",
				"--max-line", strconv.Itoa(max), "--log-level", "error"}, "\x1f"))
			cmd.Stdin = strings.NewReader(legacyInit(t, tc.size) + "\n")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			answered := strings.Contains(string(out), `"protocolVersion":"2025-11-25"`)
			if answered != tc.ok || (err == nil) != tc.ok {
				t.Errorf("a %d-byte initialize under --max-line %d: answered %v, exit %v\nstdout %q\nstderr %s", tc.size, max, answered, err, out, stderr.String())
			}
			if !tc.ok && !strings.Contains(stderr.String(), framing.ErrLineTooLong.Error()) {
				t.Errorf("a line over --max-line: stderr %s", stderr.String())
			}
		}
	})
}

// legacyInit is a 2025-11-25 initialize request of exactly n bytes (of
// its smallest size for 0).
func legacyInit(t *testing.T, n int) string {
	t.Helper()
	return padded(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"version":"1","name":"`, `"}}}`, n)
}

// legacyEcho is a 2025-11-25 tools/call of echo of exactly n bytes.
func legacyEcho(t *testing.T, n int) string {
	t.Helper()
	return padded(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`, `"}}}`, n)
}

// padded is head, as many 'n' as make n bytes in all, and tail.
func padded(t *testing.T, head, tail string, n int) string {
	t.Helper()
	if n == 0 {
		n = len(head) + len(tail) + 1
	}
	if n <= len(head)+len(tail) {
		t.Fatalf("%s…%s cannot be %d bytes", head[:20], tail, n)
	}
	return head + strings.Repeat("n", n-len(head)-len(tail)) + tail
}

// TestServeHelpHidesTestFlags: `serve -h` does not list the test-only
// flags (--insecure-test-auth), which still parse (issue 20).
func TestServeHelpHidesTestFlags(t *testing.T) {
	_, help, code := mcpwire(t, "serve", "-h")
	if code != 0 || !strings.Contains(help, "-http") || !strings.Contains(help, "-max-body") {
		t.Fatalf("serve -h: exit %d\n%s", code, help)
	}
	if strings.Contains(help, "insecure-test-auth") || strings.Contains(help, "TESTS ONLY") {
		t.Errorf("serve -h shows a test-only flag:\n%s", help)
	}
	if f := parseServeFlags([]string{"--insecure-test-auth"}); !f.testAuth {
		t.Error("--insecure-test-auth no longer parses")
	}
}
