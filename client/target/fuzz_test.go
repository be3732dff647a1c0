package target_test

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// FuzzOpen: the target syntax (load, probe and call share it) never
// panics, connects or spawns nothing when parsed, and opens exactly the
// targets its grammar names: http(s) URLs with a host and no credentials,
// stdio: with at least one command word, tcp:// with a host:port and
// unix:// with a path. Everything else is an error naming the target.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/mcp", "https://example.com", "http://", "http://u:p@h/", "https://[::1]:1/x#f",
		"stdio:'mcpwire serve --stdio'", "stdio:", "stdio:'unterminated", `stdio:"a b" c\ d`, "stdio:   ", "tcp://127.0.0.1:9", "tcp://", "tcp:///",
		"unix:///tmp/s.sock", "unix://", "ftp://x", "HTTP://x", "", "http://%zz", "http://h:99999999999/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := target.Open(s, target.Config{})
		if err != nil {
			if c != nil {
				t.Fatalf("Open(%q): a client and an error %v", s, err)
			}
			if !strings.Contains(err.Error(), "URL") && !strings.Contains(err.Error(), "target") {
				t.Fatalf("Open(%q): error %q names neither the target nor the URL", s, err)
			}
			return
		}
		defer c.Close()
		switch {
		case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
			u, perr := url.Parse(s)
			if perr != nil || u.Hostname() == "" || u.User != nil {
				t.Fatalf("Open(%q) accepted a URL without a host or with credentials (%v)", s, perr)
			}
		case strings.HasPrefix(s, "stdio:"):
			words, serr := netutil.SplitCommand(strings.TrimPrefix(s, "stdio:"))
			if serr != nil || len(words) == 0 {
				t.Fatalf("Open(%q) accepted a command line that splits to %q, %v", s, words, serr)
			}
		case strings.HasPrefix(s, "tcp://"):
			if _, _, herr := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(s, "tcp://"), "/")); herr != nil {
				t.Fatalf("Open(%q) accepted an address that is not host:port: %v", s, herr)
			}
		case strings.HasPrefix(s, "unix://"):
			if strings.TrimPrefix(s, "unix://") == "" {
				t.Fatalf("Open(%q) accepted no socket path", s)
			}
		default:
			t.Fatalf("Open(%q) accepted a target outside the grammar", s)
		}
	})
}
