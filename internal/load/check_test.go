package load

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestResultCheck: a run whose every request failed is an error whatever
// the threshold (before, mcpwire load reported rpc_-32602 for 100 % of
// the requests and exited 0); past the threshold it is one; below it, or
// with nothing measured, it is not.
func TestResultCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		requests int64
		errs     map[string]int64
		share    float64
		want     string // substring of the error; "" for none
	}{
		{"all failed", 100, map[string]int64{"rpc_-32602": 100}, DefaultMaxErrorShare, "every request failed (rpc_-32602=100"},
		{"all failed, threshold off", 10, map[string]int64{"timeout": 4, "rpc_-32603": 6}, 1, "every request failed"},
		{"over the threshold", 100, map[string]int64{"timeout": 51}, DefaultMaxErrorShare, "51.00% of requests failed, over -max-error-share 0.5"},
		{"at the threshold", 100, map[string]int64{"timeout": 50}, DefaultMaxErrorShare, ""},
		{"threshold off", 100, map[string]int64{"timeout": 99}, 1, ""},
		{"a few", 1000, map[string]int64{"timeout": 3}, DefaultMaxErrorShare, ""},
		{"none", 1000, nil, 0, ""},
		{"nothing measured", 0, nil, 0, ""},
	} {
		err := (&Result{Requests: tc.requests, Errors: tc.errs}).Check(tc.share)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want none", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// startNoToolServer is a line server on network/addr that has no tool:
// every request gets -32602 (what mcpwire answers for an unknown tool).
func startNoToolServer(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					var m rpcMsg
					if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
						continue
					}
					if _, err := c.Write(append(errorJSON(m.ID, -32602), '\n')); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln
}

// TestUnknownToolFailsOnLines: against a server without the tool, every
// request of a stdio, TCP or Unix run fails with the server's JSON-RPC
// error and Check turns the run into an error (mcpwire load exits
// non-zero), as over HTTP; with one request in flight and with a pipelined
// window (there the reply shape is learnt once, then matched: its outcome
// stays the error, never a success).
func TestUnknownToolFailsOnLines(t *testing.T) {
	tcp := startNoToolServer(t, "tcp", "127.0.0.1:0")
	path := filepath.Join(t.TempDir(), "mcp.sock")
	startNoToolServer(t, "unix", path)
	for _, tc := range []struct{ name, target, code string }{
		{"stdio", fakeStdioTarget(t), "rpc_-32601"}, // the fake stdio server's answer to an unknown tool
		{"tcp", "tcp://" + tcp.Addr().String(), "rpc_-32602"},
		{"unix", "unix://" + path, "rpc_-32602"},
	} {
		for _, w := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/w%d", tc.name, w), func(t *testing.T) {
				res := runLoad(t, Config{Target: tc.target, Tool: "no-such-tool", Inflight: w, Requests: 200})
				if res.Requests != 200 || res.Errors[tc.code] != 200 {
					t.Fatalf("requests %d, errors %v: want every one %s", res.Requests, res.Errors, tc.code)
				}
				err := res.Check(DefaultMaxErrorShare)
				if err == nil || !strings.Contains(err.Error(), "every request failed ("+tc.code+"=200") {
					t.Fatalf("Check: %v", err)
				}
			})
		}
	}
}
