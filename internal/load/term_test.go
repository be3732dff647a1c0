package load

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// hostileText is server text meant to take over a terminal: a screen
// clear, a title change, a bidirectional override.
const hostileText = "evil\x1b[2J\x1b]0;pwned\x07\u202e"

const hostileEscaped = `evil\x1b[2J\x1b]0;pwned\x07\u202e`

func hasControl(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\u202e")
}

// TestStdioServerStderrEscaped: what a stdio server writes to its stderr
// reaches the run's log line by line, escaped and marked as the
// server's, the unfinished last line included (RELIABILITY F7).
func TestStdioServerStderrEscaped(t *testing.T) {
	target := fakeStdioTarget(t)
	t.Setenv(fakeStderrEnv, "line one "+hostileText+"\nno newline "+hostileText)
	_, log := runLoadLog(t, Config{Target: target, Requests: 10, Args: `{"text":"hi"}`})
	if hasControl(log) {
		t.Fatalf("a terminal control reached the log: %q", log)
	}
	for _, want := range []string{"server 0: line one " + hostileEscaped + "\n", "server 0: no newline " + hostileEscaped + "\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q lacks %q", log, want)
		}
	}
}

// TestWarningsEscaped: a warning quoting the server (here the RPC error
// message of a failed tools/list, at setup) is escaped (RELIABILITY F7).
func TestWarningsEscaped(t *testing.T) {
	f := startHTTPFake(t, func(w http.ResponseWriter, req *http.Request, m *rpcMsg) {
		switch m.Method {
		case "tools/list":
			writeJSON(w, 200, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"%s"}}`, m.ID, `evil\u001b[2J\u001b]0;pwned\u0007\u202e`))
		case "tools/call":
			writeJSON(w, 200, resultJSON(m.ID, "ok"))
		}
	})
	_, log := runLoadLog(t, Config{Target: f.url(), Requests: 5})
	if hasControl(log) {
		t.Fatalf("a terminal control reached the log: %q", log)
	}
	if !strings.Contains(log, "mcpwire load: tools/list failed") || !strings.Contains(log, hostileEscaped) {
		t.Errorf("log %q: want the tools/list warning with the message escaped", log)
	}
}

// TestWarnfEscapes: every warning goes through term.Safe, whatever it
// quotes (a transport error at teardown, a connection's read error).
func TestWarnfEscapes(t *testing.T) {
	var b strings.Builder
	r := &run{log: &b}
	r.warnf("connection %d to the server ended early: %v", 3, fmt.Errorf("read: %s", hostileText))
	if want := "mcpwire load: connection 3 to the server ended early: read: " + hostileEscaped + "\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
