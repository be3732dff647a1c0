package redisstate

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/state"
)

// Sharded pub/sub (issue 22). On a Redis Cluster a classic PUBLISH is
// broadcast to every node over the cluster bus: adding masters adds no
// backplane capacity. When the store is a cluster, cues travel instead on
// Config.Shards channels with SPUBLISH/SSUBSCRIBE (Redis 7+), which stay
// inside the slot's shard:
//
//   - channel i is "<Prefix>cues{<tag>}", with the tag picked so that its
//     hash slot falls in the i-th equal part of the 16,384 slots; on a
//     cluster whose masters own equal slot ranges (what
//     redis-cli --cluster create makes) the channels spread evenly over
//     the masters;
//   - a cue goes to the channel its URI hashes to (FNV-1a; the list kinds,
//     which have no URI, share one), so the cues of one URI stay in order;
//   - every replica subscribes to every channel, on one connection per
//     master that carries the channels whose slots it owns (CLUSTER
//     SLOTS);
//   - when one channel's subscription ends — its slot moved to another
//     master (the server sends SUNSUBSCRIBE) or its node failed (the
//     connection drops) — the whole subscription counts as lost: lost is
//     called (the engine ends every listen stream and refuses new ones),
//     every channel is subscribed again with backoff wherever its slot
//     now lives, and restored is called once all are back. A listen
//     stream may want any URI, so it is fed by every channel: ending only
//     some streams would need the engine to know the channel map, and a
//     slot move is a rare operator action. Stats.ShardsLost counts each
//     channel's loss, Stats.Lost each loss of the subscription as a whole.
//
// Every replica must spread cues the same way: New records the shard
// count in "<Prefix>shards" and refuses to start when it differs.

// DefaultShards is Config.Shards' default: the shard channels used on a
// Redis Cluster.
const DefaultShards = 16

// maxShards bounds Config.Shards: each is one subscribed channel per
// replica (on its master's connection).
const maxShards = 1024

const clusterSlots = 16384

// clusterRefresh is how often the client reads the cluster's topology on
// its own, so that a master that took over without a dropped connection
// or a MOVED reply (a graceful CLUSTER FAILOVER) is learnt.
const clusterRefresh = 2 * time.Second

// crc16 is the CRC-16/XMODEM checksum Redis Cluster hashes keys and
// channels with (polynomial 0x1021, initial value 0).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// keySlot is the cluster hash slot of a key or channel: of the part
// between the first '{' and the next '}' when that part is not empty.
func keySlot(key string) uint16 {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					return crc16(key) % clusterSlots
				}
			}
			break
		}
	}
	return crc16(key) % clusterSlots
}

// shardChannels names n channels whose slots fall in n equal parts of the
// slot space (when prefix holds no hash tag of its own).
func shardChannels(prefix string, n int) []string {
	return spreadNames(prefix+"cues", n)
}

// spreadNames names n keys or channels, base followed by a hash tag,
// whose slots fall in n equal parts of the slot space (when base holds no
// hash tag of its own).
func spreadNames(base string, n int) []string {
	names := make([]string, n)
	for i := range n {
		lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n
		for tag := 0; ; tag++ {
			name := base + "{" + strconv.Itoa(tag) + "}"
			if sl := int(keySlot(name)); sl >= lo && sl < hi {
				names[i] = name
				break
			}
			if tag > 1<<20 { // a hash tag in base pins every name
				names[i] = base + "{" + strconv.Itoa(i) + "}"
				break
			}
		}
	}
	return names
}

// shardOf returns the shard channel index a cue's URI travels on.
func shardOf(uri string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(uri))
	return int(h.Sum32() % uint32(n))
}

// setupShards chooses classic or sharded pub/sub: sharded on a cluster
// unless Shards is negative. On a cluster it checks that every replica
// spreads cues alike ("<Prefix>shards": "0" for classic).
func (s *Store) setupShards(ctx context.Context) error {
	if s.c.Mode() != rueidis.ClientModeCluster {
		return nil
	}
	n := s.opt.Shards
	switch {
	case n == 0:
		n = DefaultShards
	case n < 0:
		n = 0
	case n > maxShards:
		return fmt.Errorf("redisstate: Shards %d: at most %d", n, maxShards)
	}
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	if n > 0 {
		// A cluster without sharded pub/sub (Redis before 7, or a look-alike)
		// does not know PUBSUB SHARDNUMSUB: classic pub/sub then. Any other
		// refusal (NOPERM: an ACL user without the rights) fails New, since
		// this replica would otherwise use classic pub/sub while its fleet,
		// with other rights, uses sharded.
		s.stats.Ops.Add(1)
		err := s.c.Do(cctx, s.c.B().PubsubShardnumsub().Channel(s.opt.Prefix+"cues").Build()).Error()
		if unknownCommand(err) {
			s.log.Warn("redisstate: this Redis Cluster has no sharded pub/sub (Redis 7+): cues use classic PUBLISH, which every node relays", "err", err)
			n = 0
		} else if err != nil {
			return fmt.Errorf("redisstate: probe sharded pub/sub: %w: %w", state.ErrUnavailable, err)
		}
	}
	if err := s.agreeShards(cctx, n); err != nil {
		return err
	}
	if n > 0 {
		s.shards = shardChannels(s.opt.Prefix, n)
	}
	s.stats.Shards.Store(int64(n))
	return nil
}

// unknownCommand reports whether err is Redis refusing a command or a
// subcommand it does not know ("ERR unknown command", "ERR unknown
// subcommand"; Redis 6: "ERR Unknown subcommand or wrong number of
// arguments").
func unknownCommand(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return false
	}
	msg := strings.ToLower(re.Error())
	return strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown subcommand")
}

// agreeShards records n in "<Prefix>shards" unless a value is there
// already, and fails when that value is not n.
func (s *Store) agreeShards(ctx context.Context, n int) error {
	key := s.opt.Prefix + "shards"
	s.stats.Ops.Add(1)
	// epochScript (GET, else SET) rather than SET NX GET, which Redis 6
	// refuses.
	got, err := epochScript.Exec(ctx, s.c, []string{key}, []string{strconv.Itoa(n)}).ToString()
	if err != nil {
		return fmt.Errorf("redisstate: read %s: %w: %w", key, state.ErrUnavailable, err)
	}
	if got != strconv.Itoa(n) {
		return fmt.Errorf("redisstate: this replica would spread cues over %d shard channels, the fleet uses %s (%s; 0: classic PUBLISH): every replica must use the same Shards", n, got, key)
	}
	return nil
}

// cueChannel returns the channel a cue is published on.
func (s *Store) cueChannel(c state.Cue) string {
	if s.shards == nil {
		return s.channel
	}
	return s.shards[shardOf(c.URI, len(s.shards))]
}

// shardedSub is one Subscribe on the shard channels: one connection per
// master, carrying the channels whose slots that master owns. One
// connection per channel cost Redis about twice the CPU per cue (measured:
// profiles/cluster-bench.issue22.md): a connection that carries more of
// the cues gets more of them per write.
type shardedSub struct {
	s              *Store
	deliver        func(state.Cue)
	lost, restored func()

	// mu serializes deliver, lost and restored, which run under it; no lock
	// of the Store is taken under it (run reads the epoch key, under
	// lossMu, without it).
	mu sync.Mutex

	conns []*masterConn
	ev    chan loss
	// gen numbers the connections of each connect; a loss signal of an
	// older generation (a connection already closed or given up) is
	// stale and ignored, so one outage is one loss.
	gen atomic.Uint64
}

// loss is a connection's report that it lost n channels.
type loss struct {
	gen uint64
	n   int
}

// masterConn subscribes to the shard channels one master owns.
type masterConn struct {
	addr  string
	chans []string
	dc    rueidis.DedicatedClient
	gen   uint64      // shardedSub.gen of the connect that made it
	up    atomic.Bool // subscribed and watched: its losses are reported
}

// subscribeSharded is Subscribe on a cluster: every shard channel
// subscribed before it returns.
func (s *Store) subscribeSharded(ctx context.Context, deliver func(state.Cue), lost, restored func()) error {
	ss := &shardedSub{s: s, deliver: deliver, lost: lost, restored: restored, ev: make(chan loss, 2*len(s.shards)+1)}
	if err := ss.connect(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ss.closeConns()
		return errClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go ss.run(ctx)
	return nil
}

// owners returns the master address ("host:port", as the client names
// its nodes) owning each shard channel's slot (CLUSTER SLOTS). A master
// that gives no host (an empty endpoint: "the address you reached me on")
// is the known node on its port.
func (ss *shardedSub) owners(ctx context.Context, nodes map[string]rueidis.Client) (map[string][]string, error) {
	s := ss.s
	spans, err := s.slotSpans(ctx, nodes)
	if err != nil {
		return nil, err
	}
	byAddr := map[string][]string{}
	for _, ch := range s.shards {
		addr := spanOwner(spans, keySlot(ch))
		if addr == "" {
			return nil, fmt.Errorf("no master serves slot %d (%s)", keySlot(ch), ch)
		}
		byAddr[addr] = append(byAddr[addr], ch)
	}
	return byAddr, nil
}

// slotSpan is a range of slots and its master, named as the client's node
// map does.
type slotSpan struct {
	lo, hi int64
	addr   string
}

// spanOwner returns the master serving slot, "" when none does.
func spanOwner(spans []slotSpan, slot uint16) string {
	for _, sp := range spans {
		if sp.lo <= int64(slot) && int64(slot) <= sp.hi {
			return sp.addr
		}
	}
	return ""
}

// slotSpans reads CLUSTER SLOTS from one of the known nodes (up to three
// tried), so that a master named without a host ("the host you reached
// me on") is named with that node's host, as the client's map names it.
func (s *Store) slotSpans(ctx context.Context, nodes map[string]rueidis.Client) ([]slotSpan, error) {
	var ranges []rueidis.RedisMessage
	err := errors.New("no cluster node known")
	asked := ""
	tries := 0
	for addr, node := range nodes { // in random order: spread over the nodes
		if tries++; tries > 3 {
			break
		}
		cctx, cancel := s.opCtx(ctx)
		s.stats.Ops.Add(1)
		ranges, err = node.Do(cctx, node.B().ClusterSlots().Build()).ToArray()
		cancel()
		if err == nil {
			asked = addr
			break
		}
	}
	if err != nil {
		return nil, err
	}
	var spans []slotSpan
	for _, r := range ranges {
		v, err := r.ToArray()
		if err != nil || len(v) < 3 {
			continue
		}
		lo, err1 := v[0].AsInt64()
		hi, err2 := v[1].AsInt64()
		m, err3 := v[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(m) < 2 {
			continue
		}
		host, _ := m[0].ToString()
		port, err := m[1].AsInt64()
		if err != nil {
			continue
		}
		spans = append(spans, slotSpan{lo, hi, nodeAddr(nodes, host, port, asked)})
	}
	return spans, nil
}

// nodeAddr names a master of CLUSTER SLOTS as the client's node map does:
// one given without a host is on the host of the node asked ("host:port"),
// or, when that is not known, the only known node on its port.
func nodeAddr(nodes map[string]rueidis.Client, host string, port int64, asked string) string {
	p := strconv.FormatInt(port, 10)
	if host == "" {
		host, _, _ = net.SplitHostPort(asked)
	}
	if host != "" {
		return net.JoinHostPort(host, p)
	}
	found := ""
	for addr := range nodes {
		if _, ap, err := net.SplitHostPort(addr); err == nil && ap == p {
			if found != "" {
				return ":" + p // two known nodes on that port: cannot tell
			}
			found = addr
		}
	}
	if found == "" {
		return ":" + p
	}
	return found
}

// connect subscribes to every shard channel, one connection per master.
func (ss *shardedSub) connect(ctx context.Context) error {
	s := ss.s
	ss.gen.Add(1)
	nodes := s.c.Nodes()
	byAddr, err := ss.owners(ctx, nodes)
	if err != nil {
		return s.fail(ctx, "cluster slots", err)
	}
	for addr, chans := range byAddr {
		node, ok := nodes[addr]
		if !ok {
			// The client's map of the cluster is older than CLUSTER SLOTS:
			// a keyed read in the channel's slot goes to the node the map
			// names, which answers MOVED when it no longer owns the slot
			// (a demoted master answers PUBSUB SHARDNUMSUB itself, without
			// MOVED): the client then refreshes its map. The periodic
			// refresh (clusterRefresh) covers the rest.
			cctx, cancel := s.opCtx(ctx)
			s.stats.Ops.Add(1)
			_ = s.c.Do(cctx, s.c.B().Exists().Key(chans[0]).Build()).Error()
			cancel()
			ss.closeConns()
			return s.fail(ctx, "subscribe", fmt.Errorf("master %s not known to the client yet", addr))
		}
		mc, err := ss.connectMaster(ctx, node, addr, chans)
		if err != nil {
			ss.closeConns()
			return s.fail(ctx, "subscribe on "+addr, err)
		}
		ss.conns = append(ss.conns, mc)
	}
	return nil
}

// connectMaster subscribes to chans on a dedicated connection to the
// master at addr and returns once the master confirmed each.
func (ss *shardedSub) connectMaster(ctx context.Context, node rueidis.Client, addr string, chans []string) (*masterConn, error) {
	s := ss.s
	dc, release := node.Dedicate()
	_ = release // Close ends the connection and releases it
	subscribed := make(chan struct{}, len(chans))
	mc := &masterConn{addr: addr, chans: chans, dc: dc, gen: ss.gen.Load()}
	broken := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) {
			c, ok := parseCue(m.Message)
			if !ok {
				s.stats.Malformed.Add(1)
				return
			}
			s.stats.Delivered.Add(1)
			ss.mu.Lock()
			ss.deliver(c)
			ss.mu.Unlock()
		},
		OnSubscription: func(ps rueidis.PubSubSubscription) {
			switch ps.Kind {
			case "ssubscribe":
				subscribed <- struct{}{}
			case "sunsubscribe": // the slot moved: this channel is gone
				if mc.up.Load() {
					ss.signal(mc.gen, 1)
				}
			}
		},
	})
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	cmds := make(rueidis.Commands, 0, len(chans))
	for _, ch := range chans {
		cmds = append(cmds, dc.B().Ssubscribe().Channel(ch).Build())
	}
	s.stats.Ops.Add(uint64(len(cmds)))
	var err error
	for _, r := range dc.DoMulti(cctx, cmds...) {
		if err = r.Error(); err != nil {
			break
		}
	}
	for n := 0; err == nil && n < len(chans); n++ {
		select {
		case <-subscribed:
		case err = <-broken:
		case <-cctx.Done():
			err = cctx.Err()
		}
	}
	if err != nil {
		dc.Close()
		return nil, err
	}
	mc.up.Store(true)
	// The connection's end (a dropped or closed connection) loses every
	// channel on it; this goroutine ends with the connection.
	go func() {
		if _, ok := <-broken; ok && mc.up.Load() {
			ss.signal(mc.gen, len(chans))
		}
	}()
	return mc, nil
}

// signal reports lost channels to run, without blocking.
func (ss *shardedSub) signal(gen uint64, n int) {
	select {
	case ss.ev <- loss{gen, n}:
	default: // run is tearing everything down already
	}
}

// closeConns closes the connections, which report no loss from then on.
func (ss *shardedSub) closeConns() {
	for _, mc := range ss.conns {
		mc.up.Store(false)
		mc.dc.Close()
	}
	ss.conns = nil
}

// run waits for a loss; then, since a listen stream may want a cue of
// any channel, the subscription as a whole is lost: every connection is
// closed, lost called, and every channel subscribed again (the slots may
// have moved) with backoff, then restored called. It also reads the epoch
// key every LossCheckInterval (a flush or an eviction drops no
// connection).
func (ss *shardedSub) run(ctx context.Context) {
	s := ss.s
	defer s.wg.Done()
	var tick <-chan time.Time
	if s.opt.LossCheckInterval > 0 {
		t := time.NewTicker(s.opt.LossCheckInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		var ev loss
		select {
		case <-ctx.Done():
			ss.closeConns()
			return
		case <-s.done:
			ss.closeConns()
			return
		case <-tick:
			s.lossMu.Lock()
			s.checkEpoch(ctx, "periodic check")
			s.lossMu.Unlock()
			continue
		case ev = <-ss.ev:
		}
		if ev.gen != ss.gen.Load() {
			continue // a connection of an earlier connect: already handled
		}
		n := ev.n
		var addrs []string
		for _, mc := range ss.conns {
			addrs = append(addrs, mc.addr)
		}
		ss.closeConns()
		for drained := false; !drained; { // the other losses this one caused
			select {
			case m := <-ss.ev:
				if m.gen == ev.gen {
					n += m.n
				}
			default:
				drained = true
			}
		}
		n = min(n, len(s.shards)) // a channel unsubscribed, then its connection dropped
		s.stats.ShardsLost.Add(uint64(n))
		s.stats.Lost.Add(1)
		s.log.Warn("redisstate: a shard channel's subscription was lost (its slot moved or its master failed): listen streams end until every shard channel is subscribed again", "channels", n, "masters", addrs)
		ss.mu.Lock()
		if ss.lost != nil {
			ss.lost()
		}
		ss.mu.Unlock()
		if !s.retry(ctx, func() bool { return ss.connect(ctx) == nil }) {
			return
		}
		// A master that came back or took over may be empty: see before
		// cues flow.
		s.lossMu.Lock()
		s.checkEpoch(ctx, "shards resubscribed")
		s.lossMu.Unlock()
		s.stats.Reconnects.Add(1)
		ss.mu.Lock()
		if ss.restored != nil {
			ss.restored()
		}
		ss.mu.Unlock()
	}
}
