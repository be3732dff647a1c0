package engine

import (
	"fmt"
	"hash/maphash"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpwire/mcpwire/codec"
)

// This file holds the per-caller limits (RELIABILITY F5): open listen
// streams, requests in flight and a token-bucket request rate, each per
// caller across every connection and transport of the process, so that
// one noisy caller is refused while the others are still served.
//
// The caller is the principal the transport's authentication established
// (Call.Principal; one without an identity, a typed nil or an empty
// String, counts as anonymous), or, for an anonymous request, the key the transport
// named with Request.SetLimitKey (a non-loopback client IP on Streamable
// HTTP). An anonymous request without such a key — stdio, and sockets without an
// authenticator — is bounded by its connection's own limits only
// (Config.MaxInFlight), never by one bucket all anonymous callers share.
//
// The state is one sharded map from caller to counts: an entry exists only
// while the caller has a stream or a counted request open, or a rate
// bucket that is not yet full again, so it is bounded by the callers of
// the last few seconds. Requests that run inline (microseconds, on the
// transport's goroutine, one per connection at a time) and are not listen
// streams take no lock at all unless a rate is set.

// Defaults of the per-caller limits (Config.MaxListensPerPrincipal,
// MaxInFlightPerPrincipal, RatePerPrincipal).
const (
	// DefaultMaxListensPerPrincipal is far below the 1,024 connections one
	// client IP may hold on Streamable HTTP (streamhttp's
	// DefaultMaxConnsPerIP): a client needs one listen stream, a few
	// during a re-listen.
	DefaultMaxListensPerPrincipal = 64
	// DefaultMaxInFlightPerPrincipal equals what one line connection may
	// have in flight (DefaultMaxInFlight).
	DefaultMaxInFlightPerPrincipal = 256
	// DefaultRatePerPrincipal is 0: no request rate limit unless one is
	// configured. The listen and in-flight caps already bound what one
	// caller holds; a rate is a policy (what a caller may spend), which
	// only the operator can choose.
	DefaultRatePerPrincipal = 0
)

// Names of the per-caller limits, as in LimitStats, the refusals' error
// data ("limit") and the metric label (mcpwire_limit_refused_total).
const (
	LimitListenPerPrincipal   = "listen_per_principal"
	LimitInFlightPerPrincipal = "in_flight_per_principal"
	LimitRatePerPrincipal     = "rate_per_principal"
	LimitToolRatePerPrincipal = "tool_rate_per_principal"
)

// LimitStats counts the requests each per-caller limit refused (one per
// refusal, on every transport).
type LimitStats struct {
	ListenPerPrincipal   atomic.Uint64 // listen streams over MaxListensPerPrincipal
	InFlightPerPrincipal atomic.Uint64 // requests over MaxInFlightPerPrincipal
	RatePerPrincipal     atomic.Uint64 // requests over RatePerPrincipal
	ToolRatePerPrincipal atomic.Uint64 // tools/call requests over their Tool.RatePerPrincipal
}

// Each returns the counters by limit name, for exporters.
func (s *LimitStats) Each(fn func(limit string, refused uint64)) {
	fn(LimitListenPerPrincipal, s.ListenPerPrincipal.Load())
	fn(LimitInFlightPerPrincipal, s.InFlightPerPrincipal.Load())
	fn(LimitRatePerPrincipal, s.RatePerPrincipal.Load())
	fn(LimitToolRatePerPrincipal, s.ToolRatePerPrincipal.Load())
}

// LimitStats returns the per-caller limits' counters.
func (s *Server) LimitStats() *LimitStats { return &s.limStats }

// limitedError is the answer past a per-caller limit: -32603 with HTTP
// status 429 and data {"limit", "retryAfter"} (seconds). The spec's error
// table has no code for "too many requests", and new codes must not be
// taken from -32000…-32099 (ERR-01, ERR-02), so it is the retryable
// internal error, as ErrUnavailable is for a shared service that is down;
// the data says which limit and when to retry. Streamable HTTP adds the
// Retry-After header.
func limitedError(limit, what string, retryAfter int) *codec.Error {
	return &codec.Error{
		Code:    codec.CodeInternalError,
		Message: "Too many requests: " + what + "; retry later",
		Data:    []byte(`{"limit":"` + limit + `","retryAfter":` + strconv.Itoa(retryAfter) + `}`),
		Status:  429,
	}
}

// Shared refusals of the count limits (a slot frees when a stream or a
// call of the caller ends: retry in a second).
var (
	errTooManyListens  = limitedError(LimitListenPerPrincipal, "too many open listen streams for this caller", 1)
	errTooManyInFlight = limitedError(LimitInFlightPerPrincipal, "too many requests in flight for this caller", 1)
)

const limitShards = 16

// limitKey names a caller: a principal's string form, or the key of an
// anonymous one (Request.SetLimitKey), kept apart; tool is set for the
// caller's bucket of one tool (Tool.RatePerPrincipal).
type limitKey struct {
	anon bool
	s    string
	tool string
}

// limitEntry is one caller's state, guarded by its shard's lock.
type limitEntry struct {
	key         limitKey
	listens     int32
	inflight    int32
	rate, burst float64 // the bucket's, once it has one (hasBucket)
	tokens      float64
	last        int64 // limiter.now of the last refill
	shardIdx    uint8
	hasBucket   bool
}

type limitShard struct {
	mu      sync.Mutex
	m       map[limitKey]*limitEntry
	sweepAt int // the map size at which idle entries are swept next
	_       [40]byte
}

// limiter enforces the per-caller limits. Every Server has one: a tool
// may set a rate of its own whatever Config says.
type limiter struct {
	maxListens, maxInFlight int     // noLimitCount: off
	rate, burst             float64 // tokens per second (0: off), bucket size
	now                     func() int64
	stats                   *LimitStats
	seed                    maphash.Seed
	shards                  [limitShards]limitShard
}

const noLimitCount = math.MaxInt32

// newLimiter returns the limiter for the effective config o.
func newLimiter(o *Config, stats *LimitStats) *limiter {
	l := &limiter{maxListens: noLimitCount, maxInFlight: noLimitCount, now: monoNow, stats: stats, seed: maphash.MakeSeed()}
	if o.MaxListensPerPrincipal > 0 {
		l.maxListens = o.MaxListensPerPrincipal
	}
	if o.MaxInFlightPerPrincipal > 0 {
		l.maxInFlight = o.MaxInFlightPerPrincipal
	}
	if o.RatePerPrincipal > 0 {
		l.rate = o.RatePerPrincipal
		l.burst = float64(o.RateBurst)
	}
	for i := range l.shards {
		l.shards[i].m = map[limitKey]*limitEntry{}
		l.shards[i].sweepAt = 64
	}
	return l
}

// principalString is the principal's identity for the limits: a string as
// is, a fmt.Stringer's String, else its type and value printed. A nil
// pointer (a typed nil principal) has none: "", and so has a Stringer
// whose String is "" or panics. A caller without an identity is anonymous (acquire):
// keying every such principal by one string ("<nil>") would make them all
// one caller, sharing one set of limits.
func principalString(p any) string {
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	switch v := p.(type) {
	case string:
		return v
	case fmt.Stringer:
		return stringOf(v)
	}
	return fmt.Sprintf("%T:%v", p, p)
}

// stringOf is v.String() called directly (fmt.Sprint would add its own
// allocations per counted request); a String that panics names no caller.
func stringOf(v fmt.Stringer) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return v.String()
}

// Kinds of a counted request (Call.limKind).
const (
	limNone uint8 = iota
	limListen
	limInFlight
)

// acquire applies the limits to c at admission: nil, with c.lim set when
// a slot was taken (released by release), or the refusal, counted. The
// tool's bucket is tried first and given its token back when the caller's
// own limits refuse, so that only served requests spend tokens.
func (l *limiter) acquire(c *Call) *codec.Error {
	kind := limNone
	switch {
	case c.method == listenMethod:
		if l.maxListens != noLimitCount {
			kind = limListen
		}
	case l.maxInFlight != noLimitCount && !c.inline():
		kind = limInFlight
	}
	t := c.tool
	toolRate := t != nil && t.RatePerPrincipal > 0
	if kind == limNone && l.rate == 0 && !toolRate {
		return nil // nothing to count: no lock
	}
	var key limitKey
	if c.principal != nil {
		key.s = principalString(c.principal)
	}
	switch {
	case key.s != "":
	case c.limKey != "":
		key = limitKey{anon: true, s: c.limKey}
	default:
		return nil // anonymous and unnamed: the connection's own limits apply
	}
	c.rare = true // limRetry may be set below (release clears it)
	var tk limitKey
	if toolRate {
		tk = key
		tk.tool = t.Name
		burst := float64(t.RateBurst)
		if burst <= 0 {
			burst = math.Ceil(t.RatePerPrincipal)
		}
		if wait := l.take(tk, t.RatePerPrincipal, burst); wait > 0 {
			l.stats.ToolRatePerPrincipal.Add(1)
			c.limRetry = int32(min(wait, math.MaxInt32))
			return limitedError(LimitToolRatePerPrincipal, "request rate of this tool over the limit for this caller", wait)
		}
	}
	sh, e := l.entry(key)
	var refusal *codec.Error
	switch {
	case kind == limListen && int(e.listens) >= l.maxListens:
		l.stats.ListenPerPrincipal.Add(1)
		c.limRetry, refusal = 1, errTooManyListens
	case kind == limInFlight && int(e.inflight) >= l.maxInFlight:
		l.stats.InFlightPerPrincipal.Add(1)
		c.limRetry, refusal = 1, errTooManyInFlight
	case l.rate > 0:
		if wait := l.takeLocked(e, l.rate, l.burst); wait > 0 {
			l.stats.RatePerPrincipal.Add(1)
			c.limRetry = int32(min(wait, math.MaxInt32))
			refusal = limitedError(LimitRatePerPrincipal, "request rate over the limit for this caller", wait)
		}
	}
	if refusal != nil {
		l.dropIdleLocked(sh, e)
		sh.mu.Unlock()
		if toolRate {
			l.refund(tk)
		}
		return refusal
	}
	switch kind {
	case limListen:
		e.listens++
	case limInFlight:
		e.inflight++
	}
	sh.mu.Unlock()
	if kind != limNone {
		c.lim, c.limKind = e, kind
	}
	return nil
}

// entry returns key's entry, made if new, with its shard locked.
func (l *limiter) entry(key limitKey) (*limitShard, *limitEntry) {
	h := maphash.String(l.seed, key.s)
	if key.tool != "" {
		h ^= maphash.String(l.seed, key.tool)
	}
	idx := uint8(h % limitShards)
	sh := &l.shards[idx]
	sh.mu.Lock()
	e := sh.m[key]
	if e == nil {
		if len(sh.m) >= sh.sweepAt {
			l.sweepLocked(sh)
		}
		e = entryPool.Get().(*limitEntry)
		*e = limitEntry{key: key, shardIdx: idx}
		sh.m[key] = e
	}
	return sh, e
}

// take takes a token from key's bucket (rate per second, burst): 0, or
// the whole seconds until one is there.
func (l *limiter) take(key limitKey, rate, burst float64) int {
	sh, e := l.entry(key)
	wait := l.takeLocked(e, rate, burst)
	l.dropIdleLocked(sh, e)
	sh.mu.Unlock()
	return wait
}

// refund gives back the token take took.
func (l *limiter) refund(key limitKey) {
	sh, e := l.entry(key)
	if e.hasBucket {
		e.tokens = min(e.burst, e.tokens+1)
	}
	l.dropIdleLocked(sh, e)
	sh.mu.Unlock()
}

// takeLocked takes one token from e's bucket: 0, or the whole seconds
// until a token is there.
func (l *limiter) takeLocked(e *limitEntry, rate, burst float64) int {
	now := l.now()
	if !e.hasBucket {
		e.hasBucket, e.rate, e.burst, e.tokens, e.last = true, rate, burst, burst, now
	} else if now > e.last {
		e.tokens = min(e.burst, e.tokens+float64(now-e.last)*e.rate/1e9)
		e.last = now
	}
	if e.tokens >= 1 {
		e.tokens--
		return 0
	}
	return max(1, int(math.Ceil((1-e.tokens)/e.rate)))
}

// idleLocked reports whether e holds nothing: no stream, no request, and a
// bucket that is full again (as good as none).
func (l *limiter) idleLocked(e *limitEntry) bool {
	if e.listens != 0 || e.inflight != 0 {
		return false
	}
	if !e.hasBucket {
		return true
	}
	return e.tokens+float64(l.now()-e.last)*e.rate/1e9 >= e.burst
}

func (l *limiter) dropIdleLocked(sh *limitShard, e *limitEntry) {
	if l.idleLocked(e) {
		delete(sh.m, e.key)
		entryPool.Put(e)
	}
}

// entryPool recycles entries: a caller whose every request takes and
// gives back a slot would otherwise allocate one per request. An entry is
// only put back once it left the map with no slot held, so no request
// still points at it.
var entryPool = sync.Pool{New: func() any { return new(limitEntry) }}

// sweepLocked drops the shard's idle entries (rate buckets refilled by
// now) and sets the next sweep at twice what is left, so the work is
// amortized over the entries added in between.
func (l *limiter) sweepLocked(sh *limitShard) {
	for k, e := range sh.m {
		if l.idleLocked(e) {
			delete(sh.m, k)
			entryPool.Put(e)
		}
	}
	sh.sweepAt = max(64, 2*len(sh.m))
}

// release gives c's slot back (the end of Call.complete).
func (l *limiter) release(c *Call) {
	e := c.lim
	sh := &l.shards[e.shardIdx]
	sh.mu.Lock()
	if c.limKind == limListen {
		e.listens--
	} else {
		e.inflight--
	}
	l.dropIdleLocked(sh, e)
	sh.mu.Unlock()
	c.lim, c.limKind = nil, limNone
}

// sweepAll sweeps every shard (tests).
func (l *limiter) sweepAll() {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		l.sweepLocked(sh)
		sh.mu.Unlock()
	}
}

// entries returns how many callers the limiter holds state for (tests).
func (l *limiter) entries() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// SetLimitKey names an anonymous request's caller for the per-caller
// limits (Config.MaxListensPerPrincipal, MaxInFlightPerPrincipal,
// RatePerPrincipal): Streamable HTTP passes the client's IP unless it is
// loopback. A request with a principal is limited by its principal and
// ignores the key; an anonymous request without a key is limited only by
// its connection's own limits. Call it before Start or Run.
func (r *Request) SetLimitKey(key string) { r.c.limKey, r.c.rare = key, true }

// RetryAfter returns the seconds a request refused by a per-caller limit
// asks its client to wait (the Retry-After of the 429), or 0.
func (r *Request) RetryAfter() int { return int(r.c.limRetry) }
