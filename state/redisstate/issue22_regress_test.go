package redisstate

import (
	"context"
	"crypto/tls"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2/server"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
)

// Regression tests for the review of issue 22's code (cluster, TLS, ACL,
// Redis 6).

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
func TestClusterGracefulFailoverResubscribes(t *testing.T) { clusterFailover(t, false) }

// The same when the master is killed and its replica takes over.
func TestClusterKilledMasterFailoverResubscribes(t *testing.T) { clusterFailover(t, true) }

func clusterFailover(t *testing.T, kill bool) {
	c := redistest.StartCluster(t, 3)
	s := newClusterStore(t, c, Config{ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	l := newCueLog()
	l.subscribe(t, s)
	victim := c.Owner(t, int(keySlot(s.shards[0])))
	rep := addClusterReplica(t, c, victim)
	if kill {
		c.Kill(victim)
	} else {
		c.Cmd(t, rep, "CLUSTER", "FAILOVER")
	}
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

// One master outage (killed, then restarted empty) is one loss of the
// subscription: lost called once, restored once, and each shard channel
// counted at most once in ShardsLost. Before the fix the connections a
// failed resubscription closed reported losses of their own, which ended
// every stream a second time after it was restored.
func TestClusterMasterOutageLostOnce(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	s := newClusterStore(t, c, Config{OpTimeout: 300 * time.Millisecond, ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	l := newCueLog()
	l.subscribe(t, s)
	h, victim := handleOffFirstEpoch(t, c, s)
	c.Kill(victim)
	waitSignal(t, l.lostCh, "lost")
	time.Sleep(1500 * time.Millisecond) // several failed resubscriptions
	c.Restart(t, victim)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.Cmd(t, victim, "CLUSTER", "INFO"), "cluster_state:ok") {
		if time.Now().After(deadline) {
			t.Fatal("restarted node not ok within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitSignal(t, l.restoredCh, "restored")
	time.Sleep(time.Second) // a stale loss would show by now
	st := s.Stats()
	if n := l.lost.Load(); n != 1 {
		t.Errorf("one master outage called lost %d times, want 1", n)
	}
	if n := st.Lost.Load(); n != 1 {
		t.Errorf("Stats.Lost %d, want 1", n)
	}
	if n := st.ShardsLost.Load(); n > uint64(len(s.shards)) {
		t.Errorf("ShardsLost %d > %d channels in all", n, len(s.shards))
	}
	// The restarted master lost the handle: that is a loss (F9), not an
	// unknown handle.
	if _, err := s.Get(context.Background(), "p", h); !errors.Is(err, state.ErrLost) {
		t.Errorf("Get of a handle its restarted master lost: %v, want state.ErrLost", err)
	}
}

// handleOffFirstEpoch creates handles until one lives on a master other
// than the one holding "<Prefix>epoch" (the only epoch key before the
// fix); it returns the handle and that master's port.
func handleOffFirstEpoch(t *testing.T, c *redistest.Cluster, s *Store) (state.Handle, int) {
	t.Helper()
	first := c.Owner(t, int(keySlot(s.opt.Prefix+"epoch")))
	for range 100 {
		h, err := s.Create(context.Background(), "p", []byte("v"), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if o := c.Owner(t, int(keySlot(s.recordKey("p", h)))); o != first {
			return h, o
		}
	}
	t.Fatal("no handle off the first epoch key's master")
	return "", 0
}

// A flush of one master of a cluster loses the handles it held: a lookup
// answers state.ErrLost (503), never "not found" (RELIABILITY F9). Before
// the fix only the master holding the one epoch key was watched.
func TestClusterFlushOneMasterIsLoss(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	s := newClusterStore(t, c, Config{})
	h, victim := handleOffFirstEpoch(t, c, s)
	c.Cmd(t, victim, "FLUSHALL")
	if _, err := s.Get(context.Background(), "p", h); !errors.Is(err, state.ErrLost) {
		t.Fatalf("Get after FLUSHALL of the handle's master: %v, want state.ErrLost", err)
	}
	if n := s.Stats().DataLost.Load(); n != 1 {
		t.Fatalf("DataLost %d, want 1", n)
	}
}

// Every master of a 3-master cluster (and of up to 16 with equal slot
// ranges) holds some of the epoch keys.
func TestClusterEpochKeysOnEveryMaster(t *testing.T) {
	for _, masters := range []int{1, 3, 5, 16} {
		held := map[int]bool{}
		for _, k := range epochKeyNames(DefaultPrefix, true) {
			held[int(keySlot(k))*masters/clusterSlots] = true
		}
		if len(held) != masters {
			t.Errorf("%d masters with equal slot ranges: %d hold an epoch key", masters, len(held))
		}
	}
	if k := epochKeyNames(DefaultPrefix, false); len(k) != 1 || k[0] != DefaultPrefix+"epoch" {
		t.Errorf("single Redis epoch keys %q", k)
	}
}

// The check that every replica spreads cues alike works on Redis 6,
// which refuses SET with both NX and GET (Redis 7 syntax): before the fix
// New failed on every Redis 6 cluster, even with classic pub/sub.
func TestAgreeShardsRedis6(t *testing.T) {
	m, s := newMini(t, Config{})
	m.Server().SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		if !strings.EqualFold(cmd, "SET") {
			return false
		}
		nx, get := false, false
		for _, a := range args {
			nx = nx || strings.EqualFold(a, "NX")
			get = get || strings.EqualFold(a, "GET")
		}
		if nx && get {
			c.WriteError("ERR syntax error") // Redis 6.2
			return true
		}
		return false
	})
	ctx := context.Background()
	for _, n := range []int{0, 0} { // first sets, second reads
		if err := s.agreeShards(ctx, n); err != nil {
			t.Fatalf("agreeShards(%d): %v", n, err)
		}
	}
	if err := s.agreeShards(ctx, 16); err == nil {
		t.Fatal("a replica with 16 shards joined a classic fleet")
	}
	if v, _ := m.Get(s.opt.Prefix + "shards"); v != "0" {
		t.Fatalf("shards key %q, want 0", v)
	}
}

// TLS verifies each node, sentinel and master against the name it is
// dialled by, not the first URL host's (rueidis dials all of them with
// one tls.Config), unless a server name is set: Config.TLS.ServerName or
// tls_server_name=. Before the fix every address was checked against the
// first host's name.
func TestClientOptionTLSServerName(t *testing.T) {
	tc, err := LoadTLS("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	named := &tls.Config{ServerName: "redis.internal"}
	for _, c := range []struct {
		url  string
		tls  *tls.Config
		want string
	}{
		{url: "rediss-sentinel://sentinel-1.internal:26379/0?addr=sentinel-2.internal:26379&master=m", tls: tc},
		{url: "rediss-sentinel://sentinel-1.internal:26379/0?addr=sentinel-2.internal:26379&master=m"},
		{url: "rediss://node-1.internal:6379/0?addr=node-2.internal:6379&addr=node-3.internal:6379", tls: tc},
		{url: "rediss://node-1.internal:6379/0?addr=node-2.internal:6379"},
		{url: "rediss://10.0.0.1:6379/0?addr=10.0.0.2:6379&tls_server_name=redis.internal", tls: tc, want: "redis.internal"},
		{url: "rediss://10.0.0.1:6379/0?tls_server_name=redis.internal", want: "redis.internal"},
		{url: "rediss://10.0.0.1:6379/0", tls: named, want: "redis.internal"},
	} {
		co, err := clientOption(c.url, c.tls)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if co.TLSConfig.ServerName != c.want {
			t.Errorf("%s: ServerName %q, want %q", c.url, co.TLSConfig.ServerName, c.want)
		}
		if co.Sentinel.MasterSet != "" && co.Sentinel.TLSConfig.ServerName != c.want {
			t.Errorf("%s: sentinels' ServerName %q, want %q", c.url, co.Sentinel.TLSConfig.ServerName, c.want)
		}
	}
	if _, err := clientOption("redis://h:1/0?tls_server_name=x", nil); err == nil {
		t.Error("tls_server_name= accepted on a URL without TLS")
	}
}

// clusterACL are the permissions the store needs on a Redis Cluster
// (docs/scale-out.md lists them).
var clusterACL = []string{"~mcpwire:*", "&mcpwire:*", "+get", "+set", "+del", "+exists", "+eval", "+evalsha", "+script|load",
	"+spublish", "+ssubscribe", "+pubsub|shardnumsub", "+cluster|slots", "+cluster|shards", "+ping", "+info"}

// An ACL user with the documented permissions runs a cluster store on
// sharded pub/sub; one that may not run PUBSUB SHARDNUMSUB makes New fail
// (NOPERM) instead of falling back to classic pub/sub in silence, which a
// fleet of replicas with other rights would then refuse or, worse, not
// hear. Before the fix any error of the probe chose classic pub/sub.
func TestClusterACLUser(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	const pw = "cluster-user-pw"
	setUser := func(name string, perms []string) {
		for _, p := range c.Ports {
			c.Cmd(t, p, append([]string{"ACL", "SETUSER", name, "on", ">" + pw}, perms...)...)
		}
	}
	setUser("mcp", clusterACL)
	var noProbe []string
	for _, p := range clusterACL {
		if p != "+pubsub|shardnumsub" {
			noProbe = append(noProbe, p)
		}
	}
	setUser("noprobe", noProbe)
	url := func(user string) string {
		return strings.Replace(c.URL(), "redis://", "redis://"+user+":"+pw+"@", 1)
	}
	ctx := context.Background()
	s, err := New(ctx, url("mcp"), Config{})
	if err != nil {
		t.Fatalf("New as a user with the documented rights: %v", err)
	}
	defer s.Close()
	if n := s.Stats().Shards.Load(); n != DefaultShards {
		t.Fatalf("Shards %d, want %d (sharded pub/sub)", n, DefaultShards)
	}
	l := newCueLog()
	l.subscribe(t, s)
	if err := s.Publish(ctx, state.Cue{Kind: state.CueResourceUpdated, URI: "file:///acl"}); err != nil {
		t.Fatal(err)
	}
	l.waitCues(t, 1)
	h, err := s.Create(ctx, "p", []byte("v"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "p", h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "p", "nope"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("Get of an unknown handle: %v, want not found", err)
	}
	s2, err := New(ctx, url("noprobe"), Config{})
	if err == nil {
		s2.Close()
		t.Fatal("New as a user refused PUBSUB SHARDNUMSUB fell back to classic pub/sub")
	}
	if !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("New as a user refused PUBSUB SHARDNUMSUB: %v, want one naming NOPERM", err)
	}
}

// Only a Redis that does not know PUBSUB SHARDNUMSUB (Redis 6 and its
// wording included) means classic pub/sub; any other error does not.
func TestUnknownCommand(t *testing.T) {
	m, s := newMini(t, Config{})
	var reply string
	m.Server().SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		if strings.EqualFold(cmd, "PUBSUB") {
			c.WriteError(reply)
			return true
		}
		return false
	})
	for msg, want := range map[string]bool{
		"ERR unknown command 'PUBSUB', with args beginning with: 'SHARDNUMSUB' ":                  true,
		"ERR unknown subcommand 'SHARDNUMSUB'. Try PUBSUB HELP.":                                  true,
		"ERR Unknown subcommand or wrong number of arguments for 'SHARDNUMSUB'. Try PUBSUB HELP.": true,
		"NOPERM this user has no permissions to run the 'pubsub|shardnumsub' command":             false,
		"LOADING Redis is loading the dataset in memory":                                          false,
	} {
		reply = msg
		err := s.c.Do(context.Background(), s.c.B().PubsubShardnumsub().Channel("x").Build()).Error()
		if got := unknownCommand(err); got != want {
			t.Errorf("%q (%v): unknownCommand %v, want %v", msg, err, got, want)
		}
	}
	if unknownCommand(context.DeadlineExceeded) {
		t.Error("a timeout taken for an unknown command")
	}
}

// A cluster that names its masters without a host (CLUSTER SLOTS gives a
// null endpoint: "the host you reached me on") still gets its shard
// channels subscribed on the right nodes and carries cues.
func TestClusterUnknownEndpoint(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	for _, p := range c.Ports {
		c.Cmd(t, p, "CONFIG", "SET", "cluster-preferred-endpoint-type", "unknown-endpoint")
	}
	s := newClusterStore(t, c, Config{})
	l := newCueLog()
	l.subscribe(t, s)
	for _, p := range c.Ports {
		if got := c.Cmd(t, p, "PUBSUB", "SHARDCHANNELS"); got == "" {
			t.Errorf("master %d subscribed to no shard channel", p)
		}
	}
	for i := range 20 {
		if err := s.Publish(context.Background(), state.Cue{Kind: state.CueResourceUpdated, URI: "file:///u/" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	l.waitCues(t, 20)
}
