//go:build cluster

package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/redistest"
)

// Issue 22: the fleet on a 3-master Redis Cluster, where cues travel by
// sharded pub/sub (SPUBLISH/SSUBSCRIBE on shard channels spread over the
// masters). Every node is started and stopped by its PID, on loopback.

// TestRedisCluster: the store-dependent checks of TestCluster on a Redis
// Cluster of 3 masters, then a shard channel's slot moved and a master
// killed and restarted.
func TestRedisCluster(t *testing.T) {
	if memoryOnly {
		t.Skip("MCPWIRE_CLUSTER_STATE=memory: replicas share nothing")
	}
	testFleet(t, newCluster(t, 3))
}

func (c *cluster) startRedisCluster() {
	t := c.t
	for i := range c.masters {
		c.nodePorts = append(c.nodePorts, redistest.ClusterPort(t))
		c.nodes = append(c.nodes, nil)
		if err := os.Mkdir(filepath.Join(c.dir, "node"+strconv.Itoa(i+1)), 0o700); err != nil {
			t.Fatal(err)
		}
		c.startNode(i)
	}
	args := []string{"--cluster", "create"}
	for _, p := range c.nodePorts {
		args = append(args, "127.0.0.1:"+strconv.Itoa(p))
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(need(t, "redis-cli"), args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitClusterOK(t, 10*time.Second)
	c.redisPort = c.nodePorts[0]
}

// startNode starts (or restarts, with its nodes.conf) node i.
func (c *cluster) startNode(i int) {
	dir := filepath.Join(c.dir, "node"+strconv.Itoa(i+1))
	c.nodes[i] = start(c.t, c.dir, "redis"+strconv.Itoa(i+1), need(c.t, "redis-server"),
		"--bind", "127.0.0.1", "--port", strconv.Itoa(c.nodePorts[i]),
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--cluster-node-timeout", "1000", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "verbose")
	waitPort(c.t, c.nodePorts[i], c.nodes[i])
}

func (c *cluster) waitClusterOK(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, p := range c.nodePorts {
		for !strings.Contains(c.cli(t, p, "CLUSTER", "INFO"), "cluster_state:ok") {
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %d not ok within %s", p, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// cli runs one command with redis-cli on the node at port.
func (c *cluster) cli(t *testing.T, port int, args ...string) string {
	t.Helper()
	out, err := exec.Command(need(t, "redis-cli"), append([]string{"-p", strconv.Itoa(port), "--raw"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli -p %d %v: %v\n%s", port, args, err, out)
	}
	return string(out)
}

// clusterURL names the cluster as --state: a node, the others as seeds.
func (c *cluster) clusterURL() string {
	u := "redis://127.0.0.1:" + strconv.Itoa(c.nodePorts[0]) + "/0"
	for i, p := range c.nodePorts[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=127.0.0.1:" + strconv.Itoa(p)
	}
	return u
}

// publishCmd is the command cues are published with.
func (c *cluster) publishCmd() string {
	if c.masters > 0 {
		return "spublish"
	}
	return "publish"
}

// logNames are the processes whose logs a failed run shows.
func (c *cluster) logNames() []string {
	names := []string{"redis"}
	if c.masters > 0 {
		names = names[:0]
		for i := range c.masters {
			names = append(names, "redis"+strconv.Itoa(i+1))
		}
	}
	return append(names, "r1", "r2", "r3", "haproxy")
}

// slotOwner returns the index of the master that owns slot.
func (c *cluster) slotOwner(t *testing.T, slot int) int {
	t.Helper()
	if addr, ok := redistest.SlotOwner(c.cli(t, c.nodePorts[0], "CLUSTER", "NODES"), slot); ok {
		for i, p := range c.nodePorts {
			if strings.HasSuffix(addr, ":"+strconv.Itoa(p)) {
				return i
			}
		}
	}
	t.Fatalf("no master owns slot %d", slot)
	return -1
}

// listenAll opens a listen stream on every replica directly and one
// through the balancer.
func (c *cluster) listenAll(t *testing.T, prefix string) []*stream {
	t.Helper()
	var ss []*stream
	for i := range 3 {
		s, err := listen(c.replica(i), prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.close)
		ss = append(ss, s)
	}
	s, err := listen(c.url(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return append(ss, s)
}

// relistenDelivers waits until every replica accepts a listen again (its
// subscription is whole: a replica refuses listens, and publishes, while
// any shard channel is down), then checks that an update through each
// replica reaches a stream opened through the balancer.
func (c *cluster) relistenDelivers(t *testing.T, prefix string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for i := range 3 {
		for ; ; time.Sleep(100 * time.Millisecond) {
			s, err := listen(c.replica(i), prefix)
			if err == nil {
				s.close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d: listen not accepted again within %s: %v", i+1, within, err)
			}
		}
	}
	s, err := listen(c.url(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var uris []string
	for i := range 3 {
		u := prefix + "after/" + strconv.Itoa(i)
		touch(t, c.replica(i), u)
		uris = append(uris, u)
	}
	if missing, dup := s.waitAll(uris, 5*time.Second); len(missing) > 0 || dup > 0 {
		t.Fatalf("after recovery: missing %v, %d duplicated", missing, dup)
	}
}

func testRedisClusterOutages(t *testing.T, c *cluster) {
	t.Run("shard_channels_on_every_master", func(t *testing.T) {
		// Every master carries some of the shard channels, no classic
		// channel is used: no cue is relayed to every node.
		total := map[string]bool{}
		for _, p := range c.nodePorts {
			chans := strings.Fields(c.cli(t, p, "PUBSUB", "SHARDCHANNELS"))
			if len(chans) == 0 {
				t.Errorf("master %d carries no shard channel", p)
			}
			for _, ch := range chans {
				total[ch] = true
			}
			if classic := strings.TrimSpace(c.cli(t, p, "PUBSUB", "CHANNELS")); classic != "" {
				t.Errorf("master %d has classic channels: %q", p, classic)
			}
		}
		if len(total) < c.masters {
			t.Fatalf("%d shard channels in all", len(total))
		}
		t.Logf("%d shard channels over %d masters", len(total), c.masters)
	})

	t.Run("shard_slot_moved_ends_streams", func(t *testing.T) {
		// F9: a shard channel whose slot moves to another master is
		// unsubscribed by the old one: every listen stream is ended (it
		// may have missed cues), none silently stays open; the channel is
		// subscribed on its new master and listening works again.
		ch := strings.Fields(c.cli(t, c.nodePorts[0], "PUBSUB", "SHARDCHANNELS"))[0]
		slot, err := strconv.Atoi(strings.TrimSpace(c.cli(t, c.nodePorts[0], "CLUSTER", "KEYSLOT", ch)))
		if err != nil {
			t.Fatal(err)
		}
		ss := c.listenAll(t, "cluster://moved/")
		from := c.slotOwner(t, slot)
		to := (from + 1) % c.masters
		id := strings.TrimSpace(c.cli(t, c.nodePorts[to], "CLUSTER", "MYID"))
		moved := time.Now()
		c.cli(t, c.nodePorts[to], "CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", id)
		for i, p := range c.nodePorts {
			if i != to {
				c.cli(t, p, "CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", id)
			}
		}
		for i, s := range ss {
			if !s.ended(10 * time.Second) {
				t.Fatalf("stream %d still open 10 s after slot %d (%s) moved", i, slot, ch)
			}
		}
		t.Logf("%d listen streams ended %s after slot %d of %s moved", len(ss), time.Since(moved).Round(time.Millisecond), slot, ch)
		c.relistenDelivers(t, "cluster://moved/", 10*time.Second)
		if got := strings.TrimSpace(c.cli(t, c.nodePorts[to], "PUBSUB", "SHARDCHANNELS", ch)); got != ch {
			t.Fatalf("%s not subscribed on its new master: %q", ch, got)
		}
	})

	t.Run("master_killed_and_back", func(t *testing.T) {
		// F9, E1: a master without a replica dies: the shard channels it
		// carried are lost, so every listen stream on every replica ends
		// and listens are refused (503) until its shards are back; nothing
		// hangs. Restarted (same port, same nodes.conf), the cluster and
		// the subscriptions recover.
		ss := c.listenAll(t, "cluster://killed/")
		victim := 2
		killed := time.Now()
		c.nodes[victim].stop(syscall.SIGKILL)
		for i, s := range ss {
			if !s.ended(10 * time.Second) {
				t.Fatalf("stream %d still open 10 s after a master was killed", i)
			}
		}
		t.Logf("%d listen streams ended %s after a master was killed", len(ss), time.Since(killed).Round(time.Millisecond))
		for i := range 3 {
			if _, err := listen(c.replica(i), "cluster://killed/"); err == nil || !strings.Contains(err.Error(), "503") {
				t.Fatalf("listen on replica %d with a master down: %v", i+1, err)
			}
		}
		restarted := time.Now()
		c.startNode(victim)
		c.waitClusterOK(t, 20*time.Second)
		c.relistenDelivers(t, "cluster://killed/", 20*time.Second)
		t.Logf("listen and delivery back %s after the master restarted", time.Since(restarted).Round(time.Millisecond))
	})
}
