package redisstate

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"
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
//   - every replica subscribes to every channel, one connection per
//     channel (rueidis sends an SSUBSCRIBE to the master owning its slot);
//   - when one channel's subscription ends — its slot moved to another
//     master (the server sends SUNSUBSCRIBE) or its node failed (the
//     connection drops) — the whole subscription counts as lost: lost is
//     called (the engine ends every listen stream and refuses new ones),
//     the channel is subscribed again with backoff wherever its slot now
//     lives, and restored is called once every channel is back. A listen
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

// maxShards bounds Config.Shards: each is one connection per replica.
const maxShards = 1024

const clusterSlots = 16384

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
	chans := make([]string, n)
	for i := range n {
		lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n
		for tag := 0; ; tag++ {
			ch := prefix + "cues{" + strconv.Itoa(tag) + "}"
			if sl := int(keySlot(ch)); sl >= lo && sl < hi {
				chans[i] = ch
				break
			}
			if tag > 1<<20 { // a hash tag in the prefix pins every channel
				chans[i] = prefix + "cues{" + strconv.Itoa(i) + "}"
				break
			}
		}
	}
	return chans
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
		// refuses PUBSUB SHARDNUMSUB: classic pub/sub then.
		s.stats.Ops.Add(1)
		err := s.c.Do(cctx, s.c.B().PubsubShardnumsub().Channel(s.opt.Prefix+"cues").Build()).Error()
		if _, refused := rueidis.IsRedisErr(err); refused {
			s.log.Warn("redisstate: this Redis Cluster has no sharded pub/sub (Redis 7+): cues use classic PUBLISH, which every node relays", "err", err)
			n = 0
		} else if err != nil {
			return fmt.Errorf("redisstate: probe sharded pub/sub: %w: %w", state.ErrUnavailable, err)
		}
	}
	key := s.opt.Prefix + "shards"
	s.stats.Ops.Add(2)
	// SET NX GET (Redis 7): the value already there, or nil when ours was set.
	got, err := s.c.Do(cctx, s.c.B().Set().Key(key).Value(strconv.Itoa(n)).Nx().Get().Build()).ToString()
	if rueidis.IsRedisNil(err) {
		got, err = strconv.Itoa(n), nil
	}
	if err != nil {
		return fmt.Errorf("redisstate: read %s: %w: %w", key, state.ErrUnavailable, err)
	}
	if got != strconv.Itoa(n) {
		return fmt.Errorf("redisstate: this replica would spread cues over %d shard channels, the fleet uses %s (%s; 0: classic PUBLISH): every replica must use the same Shards", n, got, key)
	}
	if n > 0 {
		s.shards = shardChannels(s.opt.Prefix, n)
	}
	s.stats.Shards.Store(int64(n))
	return nil
}

// cueChannel returns the channel a cue is published on.
func (s *Store) cueChannel(c state.Cue) string {
	if s.shards == nil {
		return s.channel
	}
	return s.shards[shardOf(c.URI, len(s.shards))]
}

// shardedSub is one Subscribe on the shard channels.
type shardedSub struct {
	s              *Store
	deliver        func(state.Cue)
	lost, restored func()

	mu   sync.Mutex // serializes deliver, lost and restored; guards down
	down int        // shard channels not subscribed
}

// subscribeSharded is Subscribe on a cluster: every shard channel
// subscribed on a connection of its own before it returns.
func (s *Store) subscribeSharded(ctx context.Context, deliver func(state.Cue), lost, restored func()) error {
	ss := &shardedSub{s: s, deliver: deliver, lost: lost, restored: restored}
	shards := make([]*shardConn, len(s.shards))
	for i, ch := range s.shards {
		sh := &shardConn{ss: ss, channel: ch}
		if err := sh.connect(ctx); err != nil {
			for _, c := range shards[:i] {
				c.dc.Close()
			}
			return err
		}
		shards[i] = sh
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		for _, sh := range shards {
			sh.dc.Close()
		}
		return errClosed
	}
	s.wg.Add(len(shards) + 1)
	s.mu.Unlock()
	for _, sh := range shards {
		go sh.run(ctx)
	}
	go ss.checkLoss(ctx)
	return nil
}

// checkLoss reads the epoch key every LossCheckInterval: a flush or an
// eviction drops no connection.
func (ss *shardedSub) checkLoss(ctx context.Context) {
	s := ss.s
	defer s.wg.Done()
	if s.opt.LossCheckInterval <= 0 {
		return
	}
	t := time.NewTicker(s.opt.LossCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-t.C:
			s.lossMu.Lock()
			s.checkEpoch(ctx, "periodic check")
			s.lossMu.Unlock()
		}
	}
}

// shardConn is the subscription to one shard channel.
type shardConn struct {
	ss      *shardedSub
	channel string
	dc      rueidis.DedicatedClient
	broken  <-chan error  // the connection's end
	moved   chan struct{} // the server unsubscribed us (the slot moved)
}

// errShardMoved: the server ended the subscription (SUNSUBSCRIBE push).
var errShardMoved = fmt.Errorf("redisstate: shard channel unsubscribed by the server (its slot moved): %w", state.ErrUnavailable)

// connect subscribes on a fresh dedicated connection to the master that
// owns the channel's slot.
func (sh *shardConn) connect(ctx context.Context) error {
	ss, s := sh.ss, sh.ss.s
	dc, release := s.c.Dedicate()
	_ = release // Close ends the connection and releases it
	subscribed := make(chan struct{}, 1)
	moved := make(chan struct{}, 1)
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
			ch := subscribed
			if ps.Kind == "sunsubscribe" {
				ch = moved
			} else if ps.Kind != "ssubscribe" {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		},
	})
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	err := dc.Do(cctx, dc.B().Ssubscribe().Channel(sh.channel).Build()).Error()
	if err == nil {
		select {
		case <-subscribed:
		case <-moved:
			err = errShardMoved
		case err = <-broken:
		case <-cctx.Done():
			err = cctx.Err()
		}
	}
	if err != nil {
		dc.Close()
		return s.fail(ctx, "subscribe "+sh.channel, err)
	}
	sh.dc, sh.broken, sh.moved = dc, broken, moved
	return nil
}

func (sh *shardConn) run(ctx context.Context) {
	ss, s := sh.ss, sh.ss.s
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			sh.dc.Close()
			return
		case <-s.done:
			sh.dc.Close()
			return
		case <-sh.broken:
		case <-sh.moved:
		}
		sh.dc.Close()
		s.stats.ShardsLost.Add(1)
		ss.mu.Lock()
		ss.down++
		if ss.down == 1 {
			s.stats.Lost.Add(1)
			if ss.lost != nil {
				ss.lost()
			}
		}
		ss.mu.Unlock()
		s.log.Warn("redisstate: a shard channel's subscription was lost (its slot moved or its node failed): listen streams end until it is back", "channel", sh.channel)
		wait := s.opt.ReconnectMin
		for {
			d := wait/2 + rand.N(wait/2+1)
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.done:
				t.Stop()
				return
			case <-t.C:
			}
			if sh.connect(ctx) == nil {
				break
			}
			wait = min(2*wait, s.opt.ReconnectMax)
		}
		// The master that now owns the slot may have lost data (a failover
		// to an empty node): see before cues flow.
		s.lossMu.Lock()
		s.checkEpoch(ctx, "shard resubscribed")
		s.lossMu.Unlock()
		ss.mu.Lock()
		ss.down--
		if ss.down == 0 {
			s.stats.Reconnects.Add(1)
			if ss.restored != nil {
				ss.restored()
			}
		}
		ss.mu.Unlock()
	}
}
