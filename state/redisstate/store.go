package redisstate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/state"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	DefaultPrefix            = "mcpwire:"
	DefaultOpTimeout         = time.Second
	DefaultDialTimeout       = 500 * time.Millisecond
	DefaultOnceLease         = 10 * time.Second
	DefaultReconnectMin      = 50 * time.Millisecond
	DefaultReconnectMax      = 2 * time.Second
	DefaultHealthTimeout     = 3 * time.Second
	DefaultLostWindow        = 5 * time.Minute
	DefaultOnceLostWindow    = time.Minute
	DefaultLossCheckInterval = 5 * time.Second
)

// Config configures a Store. Every field's zero value selects the
// documented default.
type Config struct {
	// Prefix starts every key and the cue channel ("<Prefix>cues"), so
	// that several fleets can share one Redis database. Default "mcpwire:".
	Prefix string
	// DefaultTTL is the lifetime of a record created, or a Once result
	// remembered, with ttl 0. Default state.DefaultTTL (1 h). Negative: no
	// expiry (unsafe: records live until deleted).
	DefaultTTL time.Duration
	// MaxValueBytes bounds one value (and one Once result): ErrTooLarge
	// past it. Default state.DefaultMaxValueBytes (1 MiB). Negative:
	// unlimited (unsafe; Redis itself stops at 512 MiB).
	MaxValueBytes int
	// OpTimeout bounds one call to Redis when the caller's context has no
	// earlier deadline: past it the call fails with state.ErrUnavailable.
	// Default 1 s.
	OpTimeout time.Duration
	// HealthTimeout bounds a write on a connection and the PING sent on a
	// connection idle for a second; past it the connection is declared
	// dead (a frozen server, a lost network), which for the cue
	// subscription means lost. It is kept apart from OpTimeout, and
	// longer, because a false alarm is costly: every listen stream of the
	// replica ends. On a saturated 2-core machine a 1 s bound tripped
	// while Redis was alive. A frozen server is detected after about
	// 1 s + HealthTimeout. Default 3 s.
	HealthTimeout time.Duration
	// DialTimeout bounds connecting to Redis. Default 500 ms.
	DialTimeout time.Duration
	// OnceLease is how long a running Once holds its key without renewal;
	// the running replica renews it every OnceLease/3, so if that replica
	// dies another may run the call after at most OnceLease. Default 10 s.
	OnceLease time.Duration
	// ReconnectMin and ReconnectMax bound the backoff between attempts to
	// resubscribe after the subscription was lost (doubling, with
	// jitter). Defaults 50 ms and 2 s.
	ReconnectMin, ReconnectMax time.Duration
	// LostWindow is how long after a detected loss of Redis's data (a
	// restart without persistence, a flush, an eviction of the epoch key:
	// see Stats.DataLost) a lookup that misses — Get, CompareAndSet, or a Once
	// whose key could have been remembered — fails with state.ErrLost
	// (which matches state.ErrUnavailable: HTTP 503) instead of "not
	// found", so that a client is not told its handle never existed.
	// Default 5 min. Negative: never (a miss is always "not found").
	LostWindow time.Duration
	// OnceLostWindow is LostWindow for Once: for that long after a loss,
	// a Once whose key is missing (and whose ttl could have kept it) fails
	// with state.ErrLost instead of running fn, since the call may have
	// run before the loss. Every new key fails too (nobody can tell them
	// apart), so it is kept shorter than LostWindow: long enough for a
	// client's re-send after a failure. Default 1 min. Negative: never.
	OnceLostWindow time.Duration
	// LossCheckInterval is how often a subscribed store (Subscribe) reads
	// the epoch key to detect a flush or an eviction that no lookup has
	// missed yet (Stats.DataLost). Default 5 s. Negative: never (a loss is
	// then detected at New, when the subscription is re-established, and
	// when a lookup misses).
	LossCheckInterval time.Duration
	// Shards is how many channels cues are spread over when the store is
	// a Redis Cluster (sharded pub/sub, SPUBLISH/SSUBSCRIBE, Redis 7+: each
	// cue travels to one master, so backplane capacity grows with the
	// masters). Each replica holds one subscription connection per master
	// (carrying the channels whose slots that master owns), however many
	// shards; every replica must use the same value (New checks "<Prefix>shards",
	// a key without expiry: to change the count, stop the fleet and delete
	// it). Default DefaultShards (16), at most 1,024. Negative: classic
	// PUBLISH/SUBSCRIBE even on a cluster (each cue crosses the cluster bus
	// to every node). Ignored on a single Redis, which keeps classic
	// pub/sub.
	Shards int
	// MinReplicas, when positive, makes each write of a record (Create,
	// CompareAndSet) and of a Once result wait until that many replicas
	// have it (WAIT, on the connection that wrote), at most
	// ReplicaTimeout: an acknowledged write then survives a failover to
	// one of them. A write fewer replicas acknowledged in time fails with
	// state.ErrUnavailable (Stats.NotReplicated), although the master
	// applied it (as after a timeout: a retry of a CompareAndSet may
	// then conflict). It costs a round trip from the master to its
	// replicas on every write, writes off the shared pipelined
	// connection, and, with fewer replicas up than MinReplicas, every
	// write. Not on a cluster (New fails). Default 0: no wait; a failover
	// that loses writes is then told by Stats.Failovers and LostWindow.
	MinReplicas int
	// ReplicaTimeout bounds MinReplicas's wait. Default 500 ms; one of
	// OpTimeout or more is cut to OpTimeout/2, so that WAIT answers
	// before the call's deadline.
	ReplicaTimeout time.Duration
	// TLS, when set, is the TLS configuration of a rediss:// or
	// rediss-sentinel:// URL: its certificate authorities (RootCAs) and
	// client certificate (LoadTLS builds one from files). Its ServerName,
	// when set (or the URL's tls_server_name=), is checked on every
	// address; empty, each address is checked against the host it is
	// dialled by. Nil: the system's roots, no client certificate. Set for a URL without TLS, New fails.
	TLS *tls.Config
	// Logger receives the store's warnings (a restart, lost data, an
	// eviction policy that can drop state, a Once that could not store
	// its result). Nil discards them.
	Logger *slog.Logger
}

func (o *Config) fill() {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.DefaultTTL == 0 {
		o.DefaultTTL = state.DefaultTTL
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = state.DefaultMaxValueBytes
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.OnceLease <= 0 {
		o.OnceLease = DefaultOnceLease
	}
	if o.ReconnectMin <= 0 {
		o.ReconnectMin = DefaultReconnectMin
	}
	if o.ReconnectMax <= 0 {
		o.ReconnectMax = DefaultReconnectMax
	}
	o.ReconnectMax = max(o.ReconnectMax, o.ReconnectMin)
	if o.LostWindow == 0 {
		o.LostWindow = DefaultLostWindow
	}
	if o.OnceLostWindow == 0 {
		o.OnceLostWindow = DefaultOnceLostWindow
	}
	if o.LossCheckInterval == 0 {
		o.LossCheckInterval = DefaultLossCheckInterval
	}
	if o.ReplicaTimeout <= 0 {
		o.ReplicaTimeout = DefaultReplicaTimeout
	}
	if o.ReplicaTimeout >= o.OpTimeout {
		o.ReplicaTimeout = o.OpTimeout / 2
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Stats counts a Store's work; read the fields with Load.
type Stats struct {
	Ops        atomic.Uint64 // commands and scripts sent to Redis
	Errors     atomic.Uint64 // of which failed (unreachable, timed out, refused)
	TooLarge   atomic.Uint64 // values refused with ErrTooLarge
	Published  atomic.Uint64 // cues published
	Delivered  atomic.Uint64 // cues received and handed to a subscriber
	Malformed  atomic.Uint64 // messages on the cue channel that were not cues
	Lost       atomic.Uint64 // subscriptions lost (lost called)
	Reconnects atomic.Uint64 // subscriptions re-established (restored called)

	Restarts      atomic.Uint64 // Redis restarts or failovers detected (its run_id changed; not read on a cluster)
	Failovers     atomic.Uint64 // of which the epoch key survived (a promoted replica, a restart from persistence): writes acknowledged just before may be lost, so misses within LostWindow are state.ErrLost
	DataLost      atomic.Uint64 // losses of the stored state detected (the epoch key vanished or changed): read at New, on reconnection, on a lookup that misses, every LossCheckInterval while subscribed
	LostMisses    atomic.Uint64 // lookups that missed within LostWindow of a loss: state.ErrLost
	NotReplicated atomic.Uint64 // writes that fewer than MinReplicas replicas acknowledged within ReplicaTimeout (state.ErrUnavailable)
	OnceNotStored atomic.Uint64 // Once calls that ran but whose result could not be stored (ErrOnceNotStored)
	OnceLeaseLost atomic.Uint64 // Once calls whose lease may have been lost while they ran
	EvictionRisk  atomic.Int64  // 1 when Redis's maxmemory-policy can evict state keys (checked by New)

	Shards     atomic.Int64  // shard channels of sharded pub/sub (a Redis Cluster); 0: classic PUBLISH
	ShardsLost atomic.Uint64 // shard channel subscriptions lost (a slot moved, a node failed); each also ends the listen streams (Lost) unless one was down already
}

// Store is a state.Store and a state.Backplane on Redis. Every method is
// safe for concurrent use.
type Store struct {
	opt     Config
	c       rueidis.Client
	channel string
	shards  []string // the shard channels on a cluster (sharded.go); nil: classic pub/sub on channel
	stats   Stats

	log *slog.Logger

	mu     sync.Mutex
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
	runID  string // Redis's run_id when last seen ("" unknown); guarded by mu
	epoch  string // the epoch keys' values when last seen; guarded by mu
	// epochKeys are the epoch keys: one, or clusterEpochKeys on a cluster.
	epochKeys []string
	lostAt    atomic.Int64 // UnixNano of the last detected data loss; 0 none

	lossMu       sync.Mutex // held by a check of the epoch key (one at a time)
	lossChecked  time.Time  // when the last read of the epoch key for a miss began; guarded by lossMu
	lossCheckErr error      // that read's failure, nil if it succeeded; guarded by lossMu
}

var (
	_ state.Store     = (*Store)(nil)
	_ state.Backplane = (*Store)(nil)
)

// New connects to the Redis named by url (redis://[user:pass@]host:port/db,
// rediss:// for TLS, unix:///path, a cluster's seeds with addr=, a
// Sentinel-managed master with redis-sentinel://: see url.go's forms and
// docs/scale-out.md) and checks it answers. An unreachable
// Redis fails with an error matching state.ErrUnavailable, within ctx and
// at most DialTimeout+OpTimeout.
func New(ctx context.Context, url string, opt Config) (*Store, error) {
	opt.fill()
	co, err := clientOption(url, opt.TLS)
	if err != nil {
		return nil, fmt.Errorf("redisstate: URL %s: %w", redact(url), err)
	}
	co.DisableCache = true // no client-side caching: every replica reads Redis
	co.Dialer.Timeout = opt.DialTimeout
	co.Sentinel.Dialer.Timeout = opt.DialTimeout
	co.ConnWriteTimeout = opt.HealthTimeout
	co.ClientName = "mcpwire"
	co.ClusterOption.ShardsRefreshInterval = clusterRefresh // used on a cluster only
	c, err := rueidis.NewClient(co)
	if err != nil {
		return nil, fmt.Errorf("redisstate: connect %s: %w: %w", redact(url), state.ErrUnavailable, err)
	}
	if opt.MinReplicas > 0 && c.Mode() == rueidis.ClientModeCluster {
		c.Close()
		return nil, fmt.Errorf("redisstate: %s: MinReplicas is not supported on a Redis Cluster", redact(url))
	}
	s := &Store{opt: opt, c: c, channel: opt.Prefix + "cues", done: make(chan struct{}), log: opt.Logger}
	cctx, cancel := s.opCtx(ctx)
	err = c.Do(cctx, c.B().Ping().Build()).Error()
	cancel()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("redisstate: ping %s: %w: %w", redact(url), state.ErrUnavailable, err)
	}
	if err := s.setupShards(ctx); err != nil {
		c.Close()
		return nil, err
	}
	s.epochKeys = epochKeyNames(opt.Prefix, c.Mode() == rueidis.ClientModeCluster)
	if len(s.epochKeys) > 1 {
		s.checkEpochCoverage(ctx)
	}
	s.checkEviction(ctx)
	s.checkRestart(ctx)
	return s, nil
}

// redact drops a password from a URL for error messages.
func redact(url string) string {
	at := strings.LastIndexByte(url, '@')
	if sch := strings.Index(url, "://"); at >= 0 && sch >= 0 && sch < at {
		return url[:sch+3] + "…@" + url[at+1:]
	}
	return url
}

// Stats returns the store's counters.
func (s *Store) Stats() *Stats { return &s.stats }

// opCtx bounds one call by OpTimeout unless ctx ends sooner.
func (s *Store) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= s.opt.OpTimeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opt.OpTimeout)
}

// fail wraps the error of a call: when the caller cancelled ctx, its
// error as is (not counted); otherwise the failure is counted and matches
// state.ErrUnavailable (a deadline, ours or the caller's, a refused or
// dropped connection, an error reply).
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); errors.Is(cerr, context.Canceled) {
		return fmt.Errorf("redisstate: %s: %w", op, cerr)
	}
	s.stats.Errors.Add(1)
	return fmt.Errorf("redisstate: %s: %w: %w", op, state.ErrUnavailable, err)
}

func (s *Store) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

var errClosed = fmt.Errorf("redisstate: store closed: %w", state.ErrUnavailable)

// principalTag names a principal inside keys: SHA-256, so any string is
// safe and another principal's keys are simply other keys.
func principalTag(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (s *Store) recordKey(principal string, h state.Handle) string {
	return s.opt.Prefix + "h:" + principalTag(principal) + ":" + string(h)
}

func (s *Store) onceKey(principal, key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.opt.Prefix + "o:" + principalTag(principal) + ":" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// A record is stored as one string: 16 hex digits of version, 16 hex
// digits of expiry (Unix ms, 0: none), then the value.
const recHeader = 32

func appendHex16(dst []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, digits[v>>uint(i)&0xf])
	}
	return dst
}

func hex16(v uint64) string { return string(appendHex16(make([]byte, 0, 16), v)) }

// parseHex16 reads 16 hex digits (either case).
func parseHex16(b []byte) (uint64, bool) {
	if len(b) != 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// decodeRecord splits a stored record; Value aliases b.
func decodeRecord(b []byte) (state.Record, error) {
	if len(b) < recHeader {
		return state.Record{}, errMalformed
	}
	ver, ok1 := parseHex16(b[:16])
	exp, ok2 := parseHex16(b[16:32])
	if !ok1 || !ok2 || exp > math.MaxInt64 {
		return state.Record{}, errMalformed
	}
	r := state.Record{Value: b[recHeader:], Version: ver}
	if exp != 0 {
		r.Expires = time.UnixMilli(int64(exp))
	}
	return r, nil
}

var errMalformed = errors.New("redisstate: malformed record")

// ttlFor turns a ttl argument into a PX value in ms (0: no expiry).
func (s *Store) ttlFor(ttl time.Duration) (int64, error) {
	if ttl < 0 {
		return 0, fmt.Errorf("redisstate: negative ttl %v", ttl)
	}
	if ttl == 0 {
		ttl = s.opt.DefaultTTL
	}
	if ttl < 0 {
		return 0, nil
	}
	return max(ttl.Milliseconds(), 1), nil
}

func (s *Store) checkSize(v []byte) error {
	if s.opt.MaxValueBytes > 0 && len(v) > s.opt.MaxValueBytes {
		s.stats.TooLarge.Add(1)
		return fmt.Errorf("%w: %d bytes, limit %d", state.ErrTooLarge, len(v), s.opt.MaxValueBytes)
	}
	return nil
}

// Create implements state.Store: SET NX with PX expiry.
func (s *Store) Create(ctx context.Context, principal string, value []byte, ttl time.Duration) (state.Handle, error) {
	if s.isClosed() {
		return "", errClosed
	}
	if err := s.checkSize(value); err != nil {
		return "", err
	}
	px, err := s.ttlFor(ttl)
	if err != nil {
		return "", err
	}
	var exp uint64
	if px > 0 {
		exp = uint64(time.Now().UnixMilli() + px)
	}
	rec := make([]byte, 0, recHeader+len(value))
	rec = appendHex16(appendHex16(rec, 1), exp)
	rec = append(rec, value...)
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	for {
		h := state.NewHandle()
		b := s.c.B().Set().Key(s.recordKey(principal, h)).Value(rueidis.BinaryString(rec)).Nx()
		var cmd rueidis.Completed
		if px > 0 {
			cmd = b.Px(time.Duration(px) * time.Millisecond).Build()
		} else {
			cmd = b.Build()
		}
		s.stats.Ops.Add(1)
		res, rerr := s.replicated(cctx, cmd)
		err := res.Error()
		if err == nil {
			if rerr != nil {
				return "", fmt.Errorf("redisstate: create: %w", rerr)
			}
			return h, nil
		}
		if !rueidis.IsRedisNil(err) { // nil: the handle exists (not expected with 128 random bits)
			return "", s.fail(ctx, "create", err)
		}
	}
}

// Get implements state.Store: one GET.
func (s *Store) Get(ctx context.Context, principal string, h state.Handle) (state.Record, error) {
	if s.isClosed() {
		return state.Record{}, errClosed
	}
	if !h.Valid() {
		return state.Record{}, state.ErrNotFound
	}
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	b, err := s.c.Do(cctx, s.c.B().Get().Key(s.recordKey(principal, h)).Build()).AsBytes()
	if rueidis.IsRedisNil(err) {
		if err := s.checkLossOnMiss(ctx, s.opt.LostWindow); err != nil {
			return state.Record{}, err
		}
		if err := s.lostMiss(s.opt.LostWindow, 0); err != nil {
			return state.Record{}, err
		}
		return state.Record{}, state.ErrNotFound
	}
	if err != nil {
		return state.Record{}, s.fail(ctx, "get", err)
	}
	return decodeRecord(b)
}

// casScript: KEYS[1] record; ARGV[1] expected version, ARGV[2] new
// version, ARGV[3] new expiry header, ARGV[4] PX in ms ("0": keep the
// expiry), ARGV[5] value. Returns -1 not found, 0 conflict, 1 set.
var casScript = newScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
if string.sub(cur, 1, 16) ~= ARGV[1] then return 0 end
if ARGV[4] == '0' then
  redis.call('SET', KEYS[1], ARGV[2] .. string.sub(cur, 17, 32) .. ARGV[5], 'KEEPTTL')
else
  redis.call('SET', KEYS[1], ARGV[2] .. ARGV[3] .. ARGV[5], 'PX', ARGV[4])
end
return 1`)

// CompareAndSet implements state.Store: one script (EVALSHA), atomic.
func (s *Store) CompareAndSet(ctx context.Context, principal string, h state.Handle, version uint64, value []byte, ttl time.Duration) (uint64, error) {
	if s.isClosed() {
		return 0, errClosed
	}
	if !h.Valid() {
		return 0, state.ErrNotFound
	}
	if err := s.checkSize(value); err != nil {
		return 0, err
	}
	var px int64
	if ttl != 0 {
		var err error
		if px, err = s.ttlFor(ttl); err != nil {
			return 0, err
		}
	}
	var exp uint64
	if px > 0 {
		exp = uint64(time.Now().UnixMilli() + px)
	}
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	res, rerr := s.execReplicated(cctx, casScript, []string{s.recordKey(principal, h)},
		[]string{hex16(version), hex16(version + 1), hex16(exp), strconv.FormatInt(px, 10), rueidis.BinaryString(value)})
	n, err := res.AsInt64()
	if err != nil {
		return 0, s.fail(ctx, "compare-and-set", err)
	}
	if n == 1 && rerr != nil {
		return 0, fmt.Errorf("redisstate: compare-and-set: %w", rerr)
	}
	switch n {
	case 1:
		return version + 1, nil
	case 0:
		return 0, fmt.Errorf("%w: not at version %d", state.ErrConflict, version)
	default:
		if err := s.checkLossOnMiss(ctx, s.opt.LostWindow); err != nil {
			return 0, err
		}
		if err := s.lostMiss(s.opt.LostWindow, 0); err != nil {
			return 0, err
		}
		return 0, state.ErrNotFound
	}
}

// Delete implements state.Store.
func (s *Store) Delete(ctx context.Context, principal string, h state.Handle) error {
	if s.isClosed() {
		return errClosed
	}
	if !h.Valid() {
		return nil
	}
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	s.stats.Ops.Add(1)
	if err := s.c.Do(cctx, s.c.B().Del().Key(s.recordKey(principal, h)).Build()).Error(); err != nil {
		return s.fail(ctx, "delete", err)
	}
	return nil
}

// Close implements state.Store and state.Backplane: it ends every
// subscription, waits for their goroutines and closes the connections.
// Later calls fail with an error matching state.ErrUnavailable.
// Idempotent; must not be called from a deliver, lost or restored callback.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	s.wg.Wait()
	s.c.Close()
	return nil
}

// newToken returns 128 random bits in hex, naming one Once attempt.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
