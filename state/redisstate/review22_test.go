package redisstate

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
)

// Regression tests for the review of issue 22's cluster code.

// addClusterReplica starts a node, joins it to c and makes it a replica
// of the master at port; it returns the replica's port.
func addClusterReplica(t *testing.T, c *redistest.Cluster, master int) int {
	t.Helper()
	rep := redistest.StartArgs(t, "--cluster-enabled", "yes", "--cluster-config-file", t.TempDir()+"/nodes.conf", "--cluster-node-timeout", "1000")
	c.Cmd(t, rep.Port(), "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(master))
	id := c.NodeID(t, master)
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("redis-cli", "-p", strconv.Itoa(rep.Port()), "CLUSTER", "REPLICATE", id).CombinedOutput()
		if strings.Contains(string(out), "OK") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicate: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for !strings.Contains(c.Cmd(t, rep.Port(), "INFO", "replication"), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatal("replica link not up within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return rep.Port()
}

// A graceful CLUSTER FAILOVER demotes a master without dropping any
// connection: the shard channels it carried are reported lost (the
// server unsubscribes them), then subscribed again on the promoted
// replica, and cues flow again. Before the fix the client's node map
// never learnt the new master and the backplane stayed down.
func TestClusterGracefulFailoverResubscribes(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	s := newClusterStore(t, c, Config{ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	l := newCueLog()
	l.subscribe(t, s)
	victim := c.Owner(t, int(keySlot(s.shards[0])))
	rep := addClusterReplica(t, c, victim)
	c.Cmd(t, rep, "CLUSTER", "FAILOVER")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.Cmd(t, rep, "ROLE"), "master") {
		if time.Now().After(deadline) {
			t.Fatal("replica not promoted within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitSignal(t, l.lostCh, "lost")
	waitSignal(t, l.restoredCh, "restored")
	if got := c.Cmd(t, rep, "PUBSUB", "SHARDCHANNELS"); !strings.Contains(got, s.shards[0]) {
		t.Fatalf("promoted master's shard channels %q lack %s", got, s.shards[0])
	}
	// A cue on a channel the promoted master now serves arrives.
	uri := ""
	for i := 0; uri == ""; i++ {
		if u := "file:///r" + strconv.Itoa(i); shardOf(u, len(s.shards)) == 0 {
			uri = u
		}
	}
	if err := s.Publish(context.Background(), state.Cue{Kind: state.CueResourceUpdated, URI: uri}); err != nil {
		t.Fatal(err)
	}
	l.waitCues(t, 1)
}
