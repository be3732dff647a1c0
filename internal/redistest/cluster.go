package redistest

import (
	"bufio"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of masters without replicas that a test
// started on loopback (redis-server --cluster-enabled yes per node, then
// redis-cli --cluster create), without persistence. Each node is stopped
// by its PID when the test ends.
type Cluster struct {
	Ports []int
	cmds  []*exec.Cmd
	cli   string
	argv  [][]string
	bin   string
}

// Restart starts the node at port again, with its nodes.conf and no data.
func (c *Cluster) Restart(tb testing.TB, port int) {
	tb.Helper()
	i := c.index(port)
	cmd := exec.Command(c.bin, c.argv[i]...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c.cmds[i] = cmd
	waitPing(tb, port)
}

// StartCluster starts a cluster of n masters (n >= 3, redis-cli's
// minimum), killed when tb ends. Without redis-server or redis-cli in
// PATH the test is skipped, unless RequireEnv is set.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err != nil || err2 != nil {
		if os.Getenv(RequireEnv) != "" {
			tb.Fatalf("redis-server or redis-cli not in PATH and %s is set", RequireEnv)
		}
		tb.Skip("redis-server or redis-cli not in PATH")
	}
	c := &Cluster{cli: cli, bin: bin}
	tb.Cleanup(c.KillAll)
	dir := tb.TempDir()
	for i := range n {
		port := ClusterPort(tb)
		nd := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(nd, 0o700); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(nd, "nodes.conf"),
			"--cluster-node-timeout", "1000", "--save", "", "--appendonly", "no",
			"--dir", nd, "--loglevel", "warning", "--daemonize", "no")
		cmd.Dir = nd
		c.argv = append(c.argv, cmd.Args[1:])
		dieWithParent(cmd)
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		c.Ports = append(c.Ports, port)
		c.cmds = append(c.cmds, cmd)
		waitPing(tb, port)
	}
	args := []string{"--cluster", "create"}
	for _, p := range c.Ports {
		args = append(args, "127.0.0.1:"+strconv.Itoa(p))
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range c.Ports {
		for !strings.Contains(c.Cmd(tb, p, "CLUSTER", "INFO"), "cluster_state:ok") {
			if time.Now().After(deadline) {
				tb.Fatalf("cluster node %d not ok within 10s", p)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// ClusterPort picks a free loopback port whose cluster bus port (+10000)
// is free too, both below the ephemeral range (32768-).
func ClusterPort(tb testing.TB) int {
	for range 100 {
		p := 20000 + rand.IntN(2700) // bus port (+10000) below the ephemeral range too
		a, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p
	}
	tb.Fatal("no free port pair for a cluster node")
	return 0
}

func waitPing(tb testing.TB, port int) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 100*time.Millisecond)
		if err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if line == "+PONG\r\n" {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on port %d not ready within 5s", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// URL is the cluster as a --state URL: the first node, the others as
// addr= seeds.
func (c *Cluster) URL() string {
	u := "redis://127.0.0.1:" + strconv.Itoa(c.Ports[0]) + "/0"
	for i, p := range c.Ports[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=127.0.0.1:" + strconv.Itoa(p)
	}
	return u
}

// Cmd runs one command with redis-cli on the node at port and returns its
// output (raw); a failure to run fails the test.
func (c *Cluster) Cmd(tb testing.TB, port int, args ...string) string {
	tb.Helper()
	out, err := exec.Command(c.cli, append([]string{"-p", strconv.Itoa(port), "--raw"}, args...)...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redis-cli -p %d %v: %v\n%s", port, args, err, out)
	}
	return string(out)
}

// NodeID returns the cluster node id of the node at port.
func (c *Cluster) NodeID(tb testing.TB, port int) string {
	tb.Helper()
	return strings.TrimSpace(c.Cmd(tb, port, "CLUSTER", "MYID"))
}

// Owner returns the port of the master that owns slot.
func (c *Cluster) Owner(tb testing.TB, slot int) int {
	tb.Helper()
	addr, ok := SlotOwner(c.Cmd(tb, c.Ports[0], "CLUSTER", "NODES"), slot)
	if !ok {
		tb.Fatalf("no master owns slot %d", slot)
	}
	_, ps, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(ps)
	return p
}

// SlotOwner reads a CLUSTER NODES reply and returns the address (host:port,
// without the bus port) of the master whose slot ranges hold slot.
func SlotOwner(nodes string, slot int) (string, bool) {
	for line := range strings.Lines(nodes) {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				addr, _, _ := strings.Cut(f[1], "@")
				return addr, true
			}
		}
	}
	return "", false
}

// MoveSlot hands an empty slot to the master at port: every node is told
// (CLUSTER SETSLOT slot NODE id), the new owner first. The old owner
// unsubscribes the slot's sharded subscribers (SUNSUBSCRIBE).
func (c *Cluster) MoveSlot(tb testing.TB, slot, to int) {
	tb.Helper()
	id := c.NodeID(tb, to)
	s := strconv.Itoa(slot)
	c.Cmd(tb, to, "CLUSTER", "SETSLOT", s, "NODE", id)
	for _, p := range c.Ports {
		if p != to && c.cmds[c.index(p)] != nil {
			c.Cmd(tb, p, "CLUSTER", "SETSLOT", s, "NODE", id)
		}
	}
}

func (c *Cluster) index(port int) int {
	for i, p := range c.Ports {
		if p == port {
			return i
		}
	}
	return -1
}

// Kill stops the node at port by its PID at once (a node failure).
func (c *Cluster) Kill(port int) {
	i := c.index(port)
	if i < 0 || c.cmds[i] == nil {
		return
	}
	_ = c.cmds[i].Process.Kill()
	_ = c.cmds[i].Wait()
	c.cmds[i] = nil
}

// KillAll stops every node (tb's cleanup does it too).
func (c *Cluster) KillAll() {
	for _, p := range c.Ports {
		c.Kill(p)
	}
}

// Pids are the nodes' process ids (0 for a node killed).
func (c *Cluster) Pids() []int {
	out := make([]int, len(c.cmds))
	for i, cmd := range c.cmds {
		if cmd != nil {
			out[i] = cmd.Process.Pid
		}
	}
	return out
}
