package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// SentinelConfig tunes a Sentinel for a test: a failover within about a
// second of the master's death.
type SentinelConfig struct {
	Master     string // the monitored master's name; default "mymaster"
	MasterPort int    // its port on 127.0.0.1
	Quorum     int    // sentinels that must agree it is down; default 2
	DownAfter  int    // ms without an answer before it is down; default 500
	Failover   int    // failover-timeout, ms; default 2000
}

// StartSentinel starts redis-server --sentinel on a free loopback port,
// monitoring cfg's master, killed when tb ends. A Sentinel rewrites its
// configuration file, so it gets one of its own in a temporary directory.
func StartSentinel(tb testing.TB, cfg SentinelConfig) *Server {
	tb.Helper()
	if cfg.Master == "" {
		cfg.Master = "mymaster"
	}
	if cfg.Quorum == 0 {
		cfg.Quorum = 2
	}
	if cfg.DownAfter == 0 {
		cfg.DownAfter = 500
	}
	if cfg.Failover == 0 {
		cfg.Failover = 2000
	}
	r := &Server{bin: binary(tb), port: FreePort(tb), dir: tb.TempDir()}
	conf := filepath.Join(r.dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nloglevel warning\n"+
		"sentinel monitor %s 127.0.0.1 %d %d\n"+
		"sentinel down-after-milliseconds %[3]s %[6]d\n"+
		"sentinel failover-timeout %[3]s %[7]d\n"+
		"sentinel parallel-syncs %[3]s 1\n",
		r.port, r.dir, cfg.Master, cfg.MasterPort, cfg.Quorum, cfg.DownAfter, cfg.Failover)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
	r.start(tb, []string{conf, "--sentinel"})
	tb.Cleanup(func() { r.Kill() })
	return r
}

// Addr is the server's host:port on loopback.
func (r *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }
