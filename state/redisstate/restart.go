package redisstate

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/state"
)

// Detecting lost state. Redis without persistence forgets everything
// when it restarts; a flush or an eviction forgets some of it. The store
// keeps one key without expiry, "<Prefix>epoch", holding a random value
// the first replica sets. On a Redis Cluster each master can lose its
// data alone, so there are clusterEpochKeys of them, "<Prefix>epoch{tag}"
// with tags spread over the slot space like the shard channels' (every
// master of a cluster of up to clusterEpochKeys masters with equal slot
// ranges holds some; New warns when a master holds none), all read at
// each check: one that vanished or changed is a loss. Every replica reads it at New, each time the
// cue subscription is re-established (a restart always drops that
// connection), every LossCheckInterval while subscribed, and when a
// lookup misses (checkLossOnMiss): a value that vanished or changed means
// the data this replica relied on is gone (Stats.DataLost).
// Redis's run_id (INFO server), read on reconnection, tells a restart
// apart (Stats.Restarts), with or without persistence. For LostWindow
// after a loss, lookups that miss answer state.ErrLost instead of
// state.ErrNotFound.

// epochScript returns the epoch key's value, setting it to ARGV[1] if it
// is missing.
var epochScript = rueidis.NewLuaScript(epochSrc)

const epochSrc = `
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`

// checkRestart reads Redis's run_id and the epoch key and records a
// restart or a loss of data since they were last read. Failures to read
// them leave the last values (the next check tries again).
func (s *Store) checkRestart(ctx context.Context) {
	s.lossMu.Lock() // one epoch check at a time: see noteEpoch
	defer s.lossMu.Unlock()
	var runID, epoch string
	var err error
	// The shared connections may still be reconnecting after the one
	// that carries the subscription came back: a few tries.
	for try := range 3 {
		if try > 0 {
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
		var ierr error
		if runID == "" {
			runID, ierr = s.readRunID(ctx)
		}
		epoch, err = s.readEpoch(ctx)
		if err != nil {
			s.stats.Errors.Add(1)
		}
		if err == nil && ierr == nil {
			break
		}
	}
	lost := false
	if err == nil {
		lost = s.noteEpoch(epoch, "reconnect")
	}
	s.noteRunID(runID, "reconnect", lost) // an unread epoch: a failover, to be safe
}

// noteRunID records Redis's run_id just read ("": unknown, ignored). A
// change is a restart or another server answering (a failover); when the
// epoch key did not tell a loss of data (epochLost false), the writes
// acknowledged just before may still be gone: a replica promoted before
// it received them (replication is asynchronous), or a restart from a
// snapshot or an append-only file that lacks them. That is recorded as a
// failover (Stats.Failovers): misses within LostWindow answer
// state.ErrLost, never "not found". Called with lossMu held.
func (s *Store) noteRunID(runID, why string, epochLost bool) {
	if runID == "" {
		return
	}
	s.mu.Lock()
	oldRun := s.runID
	s.runID = runID
	s.mu.Unlock()
	if oldRun == "" || runID == oldRun {
		return
	}
	s.stats.Restarts.Add(1)
	s.log.Warn("redisstate: Redis restarted or failed over (another server process answers: its run_id changed)", "run_id", runID, "previous", oldRun, "detected_by", why)
	if epochLost {
		return
	}
	s.stats.Failovers.Add(1)
	s.lostAt.Store(time.Now().UnixNano())
	s.log.Error("redisstate: Redis failed over or restarted with its data: writes acknowledged just before may be lost (asynchronous replication, or persistence behind); lookups that miss answer unavailable for LostWindow",
		"lost_window", s.opt.LostWindow, "detected_by", why)
}

// checkEpoch reads the epoch key (setting it when it vanished) and records
// a loss when it changed (reported: true); a failure to read it leaves
// the last value and is returned. Called with lossMu held.
func (s *Store) checkEpoch(ctx context.Context, why string) (bool, error) {
	epoch, err := s.readEpoch(ctx)
	if err != nil {
		s.stats.Errors.Add(1)
		return false, err
	}
	return s.noteEpoch(epoch, why), nil
}

// clusterEpochKeys is how many epoch keys a store on a Redis Cluster
// keeps.
const clusterEpochKeys = 16

// epochKeyNames returns the epoch keys: one, or clusterEpochKeys on a
// cluster.
func epochKeyNames(prefix string, cluster bool) []string {
	if !cluster {
		return []string{prefix + "epoch"}
	}
	return spreadNames(prefix+"epoch", clusterEpochKeys)
}

// readEpoch reads the epoch keys (setting those that are missing) and
// returns their values joined by commas.
func (s *Store) readEpoch(ctx context.Context) (string, error) {
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(uint64(len(s.epochKeys)))
	if len(s.epochKeys) == 1 {
		return epochScript.Exec(cctx, s.c, s.epochKeys, []string{newToken()}).ToString()
	}
	// EVAL, each to its key's master in parallel (Lua.ExecMulti would
	// first load the script on every node, replicas and failed nodes too).
	cmds := make(rueidis.Commands, len(s.epochKeys))
	for i, k := range s.epochKeys {
		cmds[i] = s.c.B().Eval().Script(epochSrc).Numkeys(1).Key(k).Arg(newToken()).Build()
	}
	var b strings.Builder
	for i, r := range s.c.DoMulti(cctx, cmds...) {
		v, err := r.ToString()
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// checkEpochCoverage warns when a master of the cluster holds none of the
// epoch keys: a loss of its data alone would then go unnoticed.
func (s *Store) checkEpochCoverage(ctx context.Context) {
	spans, err := s.slotSpans(ctx, s.c.Nodes())
	if err != nil {
		s.log.Warn("redisstate: cannot read CLUSTER SLOTS to check that every master holds an epoch key", "err", err)
		return
	}
	held := map[string]bool{}
	for _, k := range s.epochKeys {
		held[spanOwner(spans, keySlot(k))] = true
	}
	for _, sp := range spans {
		if !held[sp.addr] {
			s.log.Warn("redisstate: a cluster master holds none of the epoch keys: a loss of its data alone (flush, restart without persistence) is not detected, and lookups of its lost keys answer not found",
				"master", sp.addr, "epoch_keys", len(s.epochKeys))
		}
	}
}

// checkLossOnMiss runs before a lookup that missed answers "not found":
// the key may have gone with a flush or an eviction that nothing else
// has told yet, or with a failover that promoted a replica before it had
// the key (run_id). It reads Redis's run_id and the epoch key, unless a read that began after
// the miss has ended meanwhile: misses at the same time share one read,
// and at most one is under way (lossMu). With a negative window
// (LostWindow, OnceLostWindow) the answer would not change: no read.
//
// When they cannot be read (a few tries: after a restart some pooled
// connections are still the dead ones), the miss cannot be told from a
// loss: the error returned matches state.ErrUnavailable, and the lookup
// answers it rather than "not found".
func (s *Store) checkLossOnMiss(ctx context.Context, window time.Duration) error {
	if window < 0 {
		return nil
	}
	missed := time.Now()
	s.lossMu.Lock()
	defer s.lossMu.Unlock()
	if s.lossChecked.After(missed) {
		return s.lossCheckErr // read after the miss: its outcome holds for it
	}
	s.lossChecked = time.Now()
	lostAny := false
	var err error
	for try := range 3 {
		if try > 0 {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				err = ctx.Err()
			}
			if ctx.Err() != nil {
				break
			}
		}
		var runID string
		runID, err = s.readRunID(ctx)
		lost, eerr := s.checkEpoch(ctx, "lookup miss")
		lostAny = lostAny || lost
		if err == nil && eerr == nil {
			s.noteRunID(runID, "lookup miss", lostAny)
			break
		}
		err = cmp.Or(err, eerr)
	}
	s.lossCheckErr = nil
	if err != nil {
		s.lossCheckErr = fmt.Errorf("redisstate: a lookup missed and whether the state was lost cannot be read: %w: %w", state.ErrUnavailable, err)
	}
	return s.lossCheckErr
}

// noteEpoch records the epoch key's value just read, and a loss of data
// when it differs from the last one. Called with lossMu held, so that a
// value read before another check's is never noted after it (a false
// loss). It reports whether it noted a loss.
func (s *Store) noteEpoch(epoch, why string) bool {
	s.mu.Lock()
	old := s.epoch
	s.epoch = epoch
	s.mu.Unlock()
	if old == "" || epoch == old {
		return false
	}
	s.stats.DataLost.Add(1)
	s.lostAt.Store(time.Now().UnixNano())
	s.log.Error("redisstate: Redis lost the shared state (restart without persistence, flush or eviction): handles, sessions and Once results made before are gone; lookups that miss answer unavailable for LostWindow",
		"lost_window", s.opt.LostWindow, "detected_by", why)
	return true
}

// readRunID returns Redis's run_id, "" when INFO does not give one (a
// server that does not say, or a cluster, whose nodes each have one), or
// INFO's error.
func (s *Store) readRunID(ctx context.Context) (string, error) {
	if s.c.Mode() == rueidis.ClientModeCluster {
		return "", nil
	}
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	info, err := s.c.Do(cctx, s.c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		if _, ok := rueidis.IsRedisErr(err); ok { // refused (an unknown section, ACL): it will not say
			return "", nil
		}
		return "", err
	}
	return infoField(info, "run_id"), nil
}

// infoField returns the value of name in an INFO reply ("name:value"
// lines), or "".
func infoField(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimRight(v, "\r\n")
		}
	}
	return ""
}

// lostMiss returns state.ErrLost for a lookup that missed within window
// (LostWindow or OnceLostWindow) of a detected loss of data, when the
// record could have lived that long (ttl; 0: any), else nil.
func (s *Store) lostMiss(window, ttl time.Duration) error {
	at := s.lostAt.Load()
	if at == 0 || window < 0 {
		return nil
	}
	since := time.Since(time.Unix(0, at))
	if since >= window || (ttl > 0 && since >= ttl) {
		return nil
	}
	s.stats.LostMisses.Add(1)
	return fmt.Errorf("redisstate: %w", state.ErrLost)
}

// checkEviction warns when Redis may evict the store's keys to make room:
// every key this package writes expires except the epoch key, so any
// maxmemory-policy but noeviction (allkeys-* and volatile-* alike) can
// drop state. The policy applies only under a maxmemory limit, but that
// limit can be set at run time, so the warning does not depend on it.
func (s *Store) checkEviction(ctx context.Context) {
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	// One pattern: Redis before 7 takes no more.
	m, err := s.c.Do(cctx, s.c.B().ConfigGet().Parameter("maxmemory*").Build()).AsStrMap()
	policy, ok := m["maxmemory-policy"]
	if err != nil || !ok {
		s.log.Warn("redisstate: cannot read Redis's maxmemory-policy (CONFIG GET refused?); make sure it is noeviction, or state may be evicted silently", "err", err)
		return
	}
	if policy == "noeviction" {
		s.stats.EvictionRisk.Store(0)
		return
	}
	s.stats.EvictionRisk.Store(1)
	s.log.Error("redisstate: Redis's maxmemory-policy can evict mcpwire's state keys (handles, sessions, Once results): set it to noeviction",
		"maxmemory-policy", policy, "maxmemory", m["maxmemory"])
}
