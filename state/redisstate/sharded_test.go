package redisstate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state"
)

// Issue 22 item 1: sharded pub/sub on a Redis Cluster.

// TestKeySlot: the slot function is Redis Cluster's (CRC-16/XMODEM of the
// hash tag or the whole key, mod 16,384), so the shard channels land where
// they are meant to.
func TestKeySlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31c3 {
		t.Fatalf("crc16 check value = %#x, want 0x31c3", got)
	}
	for key, want := range map[string]uint16{
		"foo": 12182, "bar": 5061, "{foo}bar": 12182, "a{foo}": 12182,
		"{}foo": keySlot("{}foo"), "x{": crc16("x{") % clusterSlots,
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if keySlot("{}foo") != crc16("{}foo")%clusterSlots {
		t.Error("an empty hash tag must hash the whole key")
	}
}

// TestShardChannels: n channels, distinct, each in its own n-th of the
// slot space, and every URI maps to one of them.
func TestShardChannels(t *testing.T) {
	for _, n := range []int{1, 3, 16, 1024} {
		chans := shardChannels(DefaultPrefix, n)
		seen := map[string]bool{}
		for i, ch := range chans {
			sl := int(keySlot(ch))
			if sl < i*clusterSlots/n || sl >= (i+1)*clusterSlots/n || seen[ch] || !strings.HasPrefix(ch, DefaultPrefix+"cues{") {
				t.Fatalf("n=%d: channel %d %q in slot %d (dup %v)", n, i, ch, sl, seen[ch])
			}
			seen[ch] = true
		}
	}
	hit := map[int]int{}
	for i := range 1000 {
		hit[shardOf("file:///r/"+strconv.Itoa(i), 16)]++
	}
	if len(hit) != 16 {
		t.Fatalf("1,000 URIs reached %d of 16 shards", len(hit))
	}
}

func newClusterStore(t *testing.T, c *redistest.Cluster, opt Config) *Store {
	t.Helper()
	s, err := New(context.Background(), c.URL(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// cueLog collects delivered cues and lost/restored calls.
type cueLog struct {
	mu                   sync.Mutex
	cues                 []state.Cue
	lost, restored       atomic.Int32
	lostCh, restoredCh   chan struct{}
	concurrent, inFlight atomic.Int32
}

func newCueLog() *cueLog {
	return &cueLog{lostCh: make(chan struct{}, 16), restoredCh: make(chan struct{}, 16)}
}

func (l *cueLog) subscribe(t *testing.T, s *Store) {
	t.Helper()
	enter := func() {
		if l.inFlight.Add(1) > 1 {
			l.concurrent.Add(1)
		}
	}
	err := s.Subscribe(context.Background(), func(c state.Cue) {
		enter()
		defer l.inFlight.Add(-1)
		l.mu.Lock()
		l.cues = append(l.cues, c)
		l.mu.Unlock()
	}, func() {
		enter()
		defer l.inFlight.Add(-1)
		l.lost.Add(1)
		l.lostCh <- struct{}{}
	}, func() {
		enter()
		defer l.inFlight.Add(-1)
		l.restored.Add(1)
		l.restoredCh <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (l *cueLog) waitCues(t *testing.T, n int) []state.Cue {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		got := append([]state.Cue(nil), l.cues...)
		l.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d cues delivered within 5s, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s not called within 10s", what)
	}
}

// TestClusterShardedDelivery: on a 3-master cluster, cues published by
// one replica reach the other (and itself) through sharded pub/sub, every
// one of them (counted per URI); the shard channels are subscribed on
// every master and no classic channel is used, so no cue is broadcast
// over the cluster bus.
func TestClusterShardedDelivery(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	a := newClusterStore(t, c, Config{})
	b := newClusterStore(t, c, Config{})
	if n := a.Stats().Shards.Load(); n != DefaultShards {
		t.Fatalf("Stats.Shards = %d, want %d", n, DefaultShards)
	}
	la, lb := newCueLog(), newCueLog()
	la.subscribe(t, a)
	lb.subscribe(t, b)

	// Every master holds some shard channels, and together all of them.
	total := 0
	for _, p := range c.Ports {
		chans := strings.Fields(c.Cmd(t, p, "PUBSUB", "SHARDCHANNELS"))
		if len(chans) == 0 {
			t.Errorf("master %d holds no shard channel", p)
		}
		total += len(chans)
		if classic := strings.TrimSpace(c.Cmd(t, p, "PUBSUB", "CHANNELS")); classic != "" {
			t.Errorf("master %d has classic channels %q", p, classic)
		}
	}
	if total != DefaultShards {
		t.Errorf("%d shard channels subscribed over the masters, want %d", total, DefaultShards)
	}
	// One subscription connection per replica and master, carrying all of
	// that master's channels (a connection per channel cost Redis twice
	// the CPU per cue).
	for _, p := range c.Ports {
		n := 0
		for line := range strings.Lines(c.Cmd(t, p, "CLIENT", "LIST")) {
			if strings.Contains(line, " ssub=") && !strings.Contains(line, " ssub=0 ") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("master %d: %d connections with sharded subscriptions, want 2 (one per replica)", p, n)
		}
	}

	var want []state.Cue
	for i := range 60 {
		cue := state.Cue{Kind: state.CueResourceUpdated, URI: "file:///r/" + strconv.Itoa(i%20)}
		if i%15 == 0 {
			cue = state.Cue{Kind: state.CueToolsChanged}
		}
		if err := a.Publish(context.Background(), cue); err != nil {
			t.Fatal(err)
		}
		want = append(want, cue)
	}
	for name, l := range map[string]*cueLog{"publisher": la, "other replica": lb} {
		got := l.waitCues(t, len(want))
		if len(got) != len(want) {
			t.Fatalf("%s: %d cues, want %d", name, len(got), len(want))
		}
		per := func(cs []state.Cue) map[string][]state.Cue {
			m := map[string][]state.Cue{}
			for _, c := range cs {
				m[c.URI] = append(m[c.URI], c)
			}
			return m
		}
		pw, pg := per(want), per(got)
		for uri, cs := range pw {
			if len(pg[uri]) != len(cs) {
				t.Fatalf("%s: URI %q: %d cues, want %d", name, uri, len(pg[uri]), len(cs))
			}
		}
		if l.concurrent.Load() != 0 {
			t.Fatalf("%s: deliver called concurrently", name)
		}
	}
	if d := b.Stats().Delivered.Load(); d != uint64(len(want)) {
		t.Fatalf("other replica Stats.Delivered = %d, want %d", d, len(want))
	}
}

// TestClusterShardCountMismatch: a replica that would spread cues over
// another number of shard channels than the fleet does not start (its
// cues would go unheard).
func TestClusterShardCountMismatch(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	newClusterStore(t, c, Config{})
	for _, shards := range []int{8, -1} {
		s, err := New(context.Background(), c.URL(), Config{Shards: shards})
		if err == nil {
			s.Close()
			t.Fatalf("Shards %d beside a fleet on %d: New succeeded", shards, DefaultShards)
		}
		if !strings.Contains(err.Error(), "same Shards") {
			t.Fatalf("Shards %d: %v", shards, err)
		}
	}
}

// TestClusterSlotMovedEndsStreams (RELIABILITY F9): when a shard
// channel's slot moves to another master, the old one unsubscribes us
// (SUNSUBSCRIBE): the subscription is lost (lost called, counted), never
// silent, and restored once the channel is subscribed on its new master,
// where cues flow again.
func TestClusterSlotMovedEndsStreams(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	s := newClusterStore(t, c, Config{ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
	l := newCueLog()
	l.subscribe(t, s)

	ch := s.shards[0]
	slot := int(keySlot(ch))
	from := c.Owner(t, slot)
	to := c.Ports[0]
	if to == from {
		to = c.Ports[1]
	}
	c.MoveSlot(t, slot, to)
	waitSignal(t, l.lostCh, "lost")
	waitSignal(t, l.restoredCh, "restored")
	if n := s.Stats().ShardsLost.Load(); n != 1 {
		t.Fatalf("Stats.ShardsLost = %d, want 1", n)
	}
	if n := s.Stats().Lost.Load(); n != 1 {
		t.Fatalf("Stats.Lost = %d, want 1", n)
	}
	if got := strings.Fields(c.Cmd(t, to, "PUBSUB", "SHARDCHANNELS", ch)); len(got) != 1 {
		t.Fatalf("channel %s not subscribed on its new master: %q", ch, got)
	}
	// A URI on the moved shard is delivered again.
	uri := ""
	for i := 0; uri == ""; i++ {
		if u := "file:///m/" + strconv.Itoa(i); shardOf(u, len(s.shards)) == 0 {
			uri = u
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := s.Publish(context.Background(), state.Cue{Kind: state.CueResourceUpdated, URI: uri})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish on the moved shard: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := l.waitCues(t, 1); got[0].URI != uri {
		t.Fatalf("delivered %v, want %s", got[0], uri)
	}
	if l.concurrent.Load() != 0 {
		t.Fatal("deliver, lost or restored called concurrently")
	}
}

// TestClusterMasterKilledEndsStreams (F9, E1): a master without a replica
// dies: the shard channels it held are lost, the subscription with them
// (lost called once, each channel counted), and publishing on those
// shards fails unavailable rather than vanishing.
func TestClusterMasterKilledEndsStreams(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	s := newClusterStore(t, c, Config{OpTimeout: 300 * time.Millisecond})
	l := newCueLog()
	l.subscribe(t, s)

	victim := c.Owner(t, int(keySlot(s.shards[0])))
	held := 0
	for _, ch := range s.shards {
		if c.Owner(t, int(keySlot(ch))) == victim {
			held++
		}
	}
	c.Kill(victim)
	waitSignal(t, l.lostCh, "lost")
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().ShardsLost.Load() < uint64(held) {
		if time.Now().After(deadline) {
			t.Fatalf("Stats.ShardsLost = %d, want %d (the channels the dead master held)", s.Stats().ShardsLost.Load(), held)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := l.lost.Load(); n != 1 {
		t.Fatalf("lost called %d times, want 1", n)
	}
	uri := ""
	for i := 0; uri == ""; i++ {
		if u := "file:///k/" + strconv.Itoa(i); shardOf(u, len(s.shards)) == 0 {
			uri = u
		}
	}
	if err := s.Publish(context.Background(), state.Cue{Kind: state.CueResourceUpdated, URI: uri}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("publish on the dead master's shard = %v, want unavailable", err)
	}
	if n := l.restored.Load(); n != 0 {
		t.Fatalf("restored called %d times with a master down", n)
	}
}

// TestNodeAddr: a master CLUSTER SLOTS names without a host is on the
// host of the node asked (nodes of several hosts may share a port: before
// the fix such a master was ":port", never found), else the only known
// node on its port, so its channels are subscribed on it.
func TestNodeAddr(t *testing.T) {
	nodes := map[string]rueidis.Client{"10.0.0.1:7000": nil, "10.0.0.2:7001": nil, "10.0.0.3:7001": nil}
	for _, c := range []struct {
		host  string
		port  int64
		asked string
		want  string
	}{
		{"10.0.0.9", 7000, "10.0.0.1:7000", "10.0.0.9:7000"},
		{"", 7000, "", "10.0.0.1:7000"},
		{"", 7001, "", ":7001"}, // two candidates, the node asked unknown
		{"", 7001, "10.0.0.3:7001", "10.0.0.3:7001"},
		{"", 7001, "10.0.0.2:7005", "10.0.0.2:7001"},
		{"", 7002, "", ":7002"},
		{"", 7000, "[::1]:7009", "[::1]:7000"},
		{"::1", 7000, "", "[::1]:7000"},
	} {
		if got := nodeAddr(nodes, c.host, c.port, c.asked); got != c.want {
			t.Errorf("nodeAddr(%q, %d, %q) = %q, want %q", c.host, c.port, c.asked, got, c.want)
		}
	}
}
