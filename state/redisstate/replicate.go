package redisstate

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/state"
)

// DefaultReplicaTimeout is Config.ReplicaTimeout's default.
const DefaultReplicaTimeout = 500 * time.Millisecond

// Writes that must survive a failover (Config.MinReplicas). Redis
// replicates asynchronously: a master acknowledges a write before any
// replica has it, and a replica promoted after the master's death lacks
// what it had not received. WAIT n t, sent on the connection that wrote,
// returns once n replicas acknowledged every write made on it before, or
// after t ms with how many did. The write and the WAIT go together in one
// DoMulti: WAIT blocks, so the client sends both on one connection taken
// from its pool (not the shared, pipelined one).

// replicated runs the write cmd and, when MinReplicas is positive, WAIT
// after it on the same connection. The write's result comes back as is;
// err is set when the write succeeded but fewer than MinReplicas replicas
// acknowledged it within ReplicaTimeout (Stats.NotReplicated): the write
// may then be lost by a failover, so the caller answers unavailable.
func (s *Store) replicated(ctx context.Context, cmd rueidis.Completed) (rueidis.RedisResult, error) {
	if s.opt.MinReplicas <= 0 {
		return s.c.Do(ctx, cmd), nil
	}
	res := s.c.DoMulti(ctx, cmd, s.c.B().Wait().Numreplicas(int64(s.opt.MinReplicas)).Timeout(max(s.opt.ReplicaTimeout.Milliseconds(), 1)).Build())
	if res[0].Error() != nil {
		return res[0], nil
	}
	return res[0], s.checkWait(res[1])
}

// checkWait reads WAIT's reply.
func (s *Store) checkWait(r rueidis.RedisResult) error {
	n, err := r.AsInt64()
	if err == nil && n >= int64(s.opt.MinReplicas) {
		return nil
	}
	s.stats.NotReplicated.Add(1)
	if err != nil {
		return fmt.Errorf("%w: the write's replication is unknown: %w", state.ErrUnavailable, err)
	}
	return fmt.Errorf("%w: the write reached %d of the %d replicas required (MinReplicas) within %v; a failover could lose it",
		state.ErrUnavailable, n, s.opt.MinReplicas, s.opt.ReplicaTimeout)
}

// script is a Lua script whose runs can be followed by WAIT (replicated).
type script struct {
	*rueidis.Lua
	src, sha string
}

func newScript(src string) script {
	sum := sha1.Sum([]byte(src))
	return script{Lua: rueidis.NewLuaScript(src), src: src, sha: hex.EncodeToString(sum[:])}
}

// execReplicated is Exec followed by WAIT when MinReplicas is positive:
// EVALSHA, and EVAL when Redis does not know the script yet.
func (s *Store) execReplicated(ctx context.Context, sc script, keys, args []string) (rueidis.RedisResult, error) {
	if s.opt.MinReplicas <= 0 {
		return sc.Exec(ctx, s.c, keys, args), nil
	}
	r, err := s.replicated(ctx, s.c.B().Evalsha().Sha1(sc.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
	if e := r.Error(); e != nil && strings.HasPrefix(e.Error(), "NOSCRIPT") {
		r, err = s.replicated(ctx, s.c.B().Eval().Script(sc.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
	}
	return r, err
}
