package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeStdioTarget is a stdio target that re-executes the test binary as a
// line-delimited MCP server (see TestMain).
func fakeStdioTarget(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeStdioEnv, "1")
	return "stdio:'" + exe + "' -test.run=^$"
}

func TestStdioCall(t *testing.T) {
	res, log := runLoadLog(t, Config{Target: fakeStdioTarget(t), Conns: 2, Inflight: 8, Requests: 2000, Args: `{"text":"hi"}`})
	if len(res.Errors) != 0 || res.Requests != 2000 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if res.Connections != 2 || res.Inflight != 8 {
		t.Errorf("connections %d inflight %d", res.Connections, res.Inflight)
	}
	if res.LatencyUs.P50 <= 0 || res.BytesSent <= 0 || res.BytesRecv <= 0 {
		t.Errorf("latency %+v, bytes %d/%d", res.LatencyUs, res.BytesSent, res.BytesRecv)
	}
	if log != "" {
		t.Errorf("the servers did not exit cleanly: %s", log)
	}
}

// TestStdioDefaultsToOneProcess: -c defaults to 1 for stdio.
func TestStdioDefaultsToOneProcess(t *testing.T) {
	res := runLoad(t, Config{Target: fakeStdioTarget(t), Inflight: 4, Requests: 100})
	if res.Connections != 1 || res.Requests != 100 || len(res.Errors) != 0 {
		t.Fatalf("connections %d requests %d errors %v", res.Connections, res.Requests, res.Errors)
	}
}

func TestStdioProgress(t *testing.T) {
	res := runLoad(t, Config{Target: fakeStdioTarget(t), Workload: WorkloadProgress, Inflight: 4, Steps: 4, SleepMs: 1, Requests: 200})
	if len(res.Errors) != 0 || res.Requests != 200 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if res.ProgressPerCall != 4 {
		t.Errorf("progress_per_call = %v, want 4", res.ProgressPerCall)
	}
}

// TestStdioTimeoutCancels: requests the server never answers time out and
// are cancelled on the wire with notifications/cancelled (STD-10).
func TestStdioTimeoutCancels(t *testing.T) {
	res, log := runLoadLog(t, Config{Target: fakeStdioTarget(t), Tool: "hang", Inflight: 3, Requests: 3, Timeout: 200 * time.Millisecond})
	if res.Errors[errTimeout] != 3 || res.Requests != 3 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
	if n := strings.Count(log, "cancelled "); n != 3 {
		t.Errorf("server saw %d cancellations, want 3:\n%s", n, log)
	}
}

// TestStdioListen spreads 10 listeners over 2 processes; each process gets
// the touches sent to it and delivers them to its own 5 listeners.
func TestStdioListen(t *testing.T) {
	res, log := runLoadLog(t, Config{
		Target: fakeStdioTarget(t), Workload: WorkloadListen, Conns: 2, Listeners: 10,
		PublishRate: 100, Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond,
	})
	if len(res.Errors) != 0 || res.acked != 10 {
		t.Fatalf("errors %v, acked %d", res.Errors, res.acked)
	}
	if res.Requests < 40 || res.Deliveries != 5*res.Requests || res.Deliveries != res.expected {
		t.Errorf("publishes %d, deliveries %d (expected %d, want 5 per publish)", res.Requests, res.Deliveries, res.expected)
	}
	if res.DeliveryLatencyUs.P50 <= 0 {
		t.Errorf("delivery latency %+v", res.DeliveryLatencyUs)
	}
	// The listen streams were cancelled before stdin closed (SUB-09).
	if n := strings.Count(log, `cancelled "listen-`); n != 10 {
		t.Errorf("%d listen cancellations, want 10:\n%s", n, log)
	}
}

func TestTCPCall(t *testing.T) {
	s := startLineServer(t, "tcp", "127.0.0.1:0")
	res := runLoad(t, Config{Target: "tcp://" + s.ln.Addr().String(), Conns: 4, Inflight: 4, Requests: 1000})
	if len(res.Errors) != 0 || res.Requests != 1000 || res.Connections != 4 {
		t.Fatalf("requests %d, errors %v, connections %d", res.Requests, res.Errors, res.Connections)
	}
}

func TestUnixCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.sock")
	startLineServer(t, "unix", path)
	res := runLoad(t, Config{Target: "unix://" + path, Conns: 2, Inflight: 16, Requests: 1000, Rate: 5000})
	if len(res.Errors) != 0 || res.Requests != 1000 {
		t.Fatalf("requests %d, errors %v", res.Requests, res.Errors)
	}
}

// TestTCPListen: listeners on 3 sockets, touches on a 4th one.
func TestTCPListen(t *testing.T) {
	s := startLineServer(t, "tcp", "127.0.0.1:0")
	res := runLoad(t, Config{
		Target: "tcp://" + s.ln.Addr().String(), Workload: WorkloadListen, Conns: 3, Listeners: 12,
		PublishRate: 100, Duration: 500 * time.Millisecond, Warmup: 100 * time.Millisecond,
	})
	if len(res.Errors) != 0 || res.acked != 12 || res.Connections != 4 {
		t.Fatalf("errors %v, acked %d, connections %d", res.Errors, res.acked, res.Connections)
	}
	if res.Requests < 40 || res.Deliveries != 12*res.Requests {
		t.Errorf("publishes %d, deliveries %d, want 12 per publish", res.Requests, res.Deliveries)
	}
}

// TestTCPUniqueURIsRefusedTouchIsNotALoss: on a socket, too, a touch the
// server refuses (nothing published) is no delivery any stream must
// receive: the reply marks it failed (stream.go's slots carry the publish).
func TestTCPUniqueURIsRefusedTouchIsNotALoss(t *testing.T) {
	s := startLineServer(t, "tcp", "127.0.0.1:0")
	s.hub.mu.Lock()
	s.hub.refuse = func(n int) bool { return n == 1 }
	s.hub.mu.Unlock()
	res := runLoad(t, Config{
		Target: "tcp://" + s.ln.Addr().String(), Workload: WorkloadListen, Conns: 3, Listeners: 12, UniqueURIs: true,
		PublishRate: 100, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeout: time.Second,
	})
	s.hub.mu.Lock()
	touches := s.hub.touches
	s.hub.mu.Unlock()
	if touches < 2 {
		t.Fatalf("%d touches: the refused one was never sent", touches)
	}
	if res.Loss == nil || *res.Loss != (Loss{}) {
		t.Fatalf("loss %+v: a refused touch counted as lost deliveries", res.Loss)
	}
	if res.Deliveries != 12*(res.Requests-res.Errors["rpc_-32000"]) {
		t.Errorf("deliveries %d, want 12 per publish that succeeded (%d publishes, errors %v)", res.Deliveries, res.Requests, res.Errors)
	}
}
