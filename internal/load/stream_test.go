package load

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// idServer is a TCP line server that answers every request but tools/call
// hang, and counts requests and ids seen twice on one connection.
type idServer struct {
	addr          string
	served, dups  atomic.Int64
	cancellations atomic.Int64
}

func startIDServer(t *testing.T) *idServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &idServer{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				seen := map[string]bool{}
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					var m rpcMsg
					if json.Unmarshal(sc.Bytes(), &m) != nil {
						continue
					}
					if m.ID == nil {
						if m.Method == "notifications/cancelled" {
							s.cancellations.Add(1)
						}
						continue
					}
					if seen[string(m.ID)] {
						s.dups.Add(1)
					}
					seen[string(m.ID)] = true
					s.served.Add(1)
					switch m.Params.Name {
					case "hang":
						continue
					case "bye":
						return // the server goes away mid-request
					}
					if _, err := c.Write(append(resultJSON(m.ID, "ok"), '\n')); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return s
}

// TestRelayOneInFlight: with -w 1 in a closed loop the reader goroutine
// sends the next request itself; every request is sent once, with an id
// not used before on its connection, and answered.
func TestRelayOneInFlight(t *testing.T) {
	s := startIDServer(t)
	res := runLoad(t, Config{Target: "tcp://" + s.addr, Conns: 3, Inflight: 1, Requests: 3000})
	if len(res.Errors) != 0 || res.Requests != 3000 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if d := s.dups.Load(); d != 0 {
		t.Errorf("%d request ids were used twice on a connection", d)
	}
	// Warm-up requests are served but not measured.
	if n := s.served.Load(); n < 3000 {
		t.Errorf("server saw %d requests, fewer than the 3000 measured", n)
	}
}

// TestRelayTimeoutRefills: with -w 1, a slot freed by the timeout sweeper
// (not by an answer) is refilled by the sender, so the loop goes on, and
// every expired request is cancelled on the wire.
func TestRelayTimeoutRefills(t *testing.T) {
	s := startIDServer(t)
	res := runLoad(t, Config{Target: "tcp://" + s.addr, Tool: "hang", Conns: 2, Inflight: 1,
		Requests: 6, Warmup: time.Nanosecond, Timeout: 100 * time.Millisecond})
	if res.Errors[errTimeout] != 6 || res.Requests != 6 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if n := s.cancellations.Load(); n < 6 {
		t.Errorf("%d cancellations, want at least 6", n)
	}
	if d := s.dups.Load(); d != 0 {
		t.Errorf("%d request ids were used twice on a connection", d)
	}
}

// TestRelayServerGoesAway: a server closing a relay connection mid-request
// costs that request (io) and ends the connection; the run still ends.
func TestRelayServerGoesAway(t *testing.T) {
	s := startIDServer(t)
	res, log := runLoadLog(t, Config{Target: "tcp://" + s.addr, Tool: "bye", Conns: 2, Inflight: 1,
		Duration: 200 * time.Millisecond, Warmup: time.Nanosecond})
	if res.Errors[errIO] != 2 || len(res.Errors) != 1 {
		t.Fatalf("errors %v, want one io error per connection", res.Errors)
	}
	if !strings.Contains(log, "ended early") {
		t.Errorf("no warning about the lost connections: %q", log)
	}
}

// TestRelayUnix: the relay over Unix sockets.
func TestRelayUnix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.sock")
	startLineServer(t, "unix", path)
	res := runLoad(t, Config{Target: "unix://" + path, Conns: 3, Inflight: 1, Requests: 1500})
	if len(res.Errors) != 0 || res.Requests != 1500 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
}

// TestRelayStdio: the relay on stdio pipes, where the reader goroutine
// itself sends (no poller).
func TestRelayStdio(t *testing.T) {
	res, log := runLoadLog(t, Config{Target: fakeStdioTarget(t), Conns: 2, Inflight: 1, Requests: 500})
	if len(res.Errors) != 0 || res.Requests != 500 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if log != "" {
		t.Errorf("the servers did not exit cleanly: %s", log)
	}
}
