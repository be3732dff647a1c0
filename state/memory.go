package state

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for MemoryConfig fields (and, where they apply, for the Redis
// store's Options); each applies when the field is zero.
const (
	DefaultTTL           = time.Hour
	DefaultMaxValueBytes = 1 << 20
	DefaultMaxRecords    = 100_000
	DefaultSweepInterval = time.Second
	DefaultSweepBatch    = 1024
	DefaultQueueLen      = 1024
)

// ErrFull is returned by a Memory store that holds MaxRecords entries
// (handles and remembered Once results together). It also matches
// ErrUnavailable, so a caller answers it as retryable (HTTP 503).
var ErrFull = errors.New("state: store full")

// errMemoryClosed is returned by a Memory after Close.
var errMemoryClosed = fmt.Errorf("state: memory store closed: %w", ErrUnavailable)

// MemoryConfig configures a Memory. Every field's zero value selects the
// documented default.
type MemoryConfig struct {
	// DefaultTTL is the lifetime of a record created, or a Once result
	// remembered, with ttl 0. Default 1 h. Negative: no expiry (unsafe:
	// records then live until deleted, bounded only by MaxRecords).
	DefaultTTL time.Duration
	// MaxValueBytes bounds one value (and one Once result): ErrTooLarge
	// past it. Default 1 MiB. Negative: unlimited (unsafe).
	MaxValueBytes int
	// MaxRecords bounds the entries held: handles plus remembered Once
	// results. Past it Create and Once fail with ErrFull (which matches
	// ErrUnavailable). Default 100,000. Negative: unlimited (unsafe).
	MaxRecords int
	// SweepInterval is how often expired entries are removed in the
	// background (they are also removed when met). Default 1 s.
	SweepInterval time.Duration
	// SweepBatch bounds the entries one round of a sweep examines (spread
	// over the 32 shards, each locked only for its share), so a sweep never
	// holds a lock for long. A shard gets another round while more than a
	// quarter of its sample had expired, 16 rounds at most per sweep.
	// Default 1,024.
	SweepBatch int
	// QueueLen bounds the cues queued for one subscriber. A subscriber
	// whose queue is full is told it lost cues (lost), then, once its
	// queue has drained, restored; cues published in between are dropped
	// for it (MemoryStats.Dropped). Default 1,024.
	QueueLen int
}

func (o *MemoryConfig) fill() {
	if o.DefaultTTL == 0 {
		o.DefaultTTL = DefaultTTL
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.MaxRecords == 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.SweepBatch <= 0 {
		o.SweepBatch = DefaultSweepBatch
	}
	if o.QueueLen <= 0 {
		o.QueueLen = DefaultQueueLen
	}
}

// MemoryStats counts a Memory's work; read the fields with Load.
type MemoryStats struct {
	Ops       atomic.Uint64 // Store calls
	Expired   atomic.Uint64 // entries removed after their TTL
	TooLarge  atomic.Uint64 // values refused with ErrTooLarge
	Full      atomic.Uint64 // Create/Once refused with ErrFull
	Published atomic.Uint64 // cues published
	Dropped   atomic.Uint64 // cue deliveries dropped for a subscriber that fell behind
	Lost      atomic.Uint64 // times a subscriber was told it lost cues
}

const memShards = 32

// Memory is a Store and a Backplane for one process: nothing to start,
// nothing shared with other processes. Records are keyed by (principal,
// handle); entries expire lazily when met and through a bounded background
// sweep. Its cues reach every Subscribe on the same Memory, which is what
// several servers in one process (tests, or one replica) need.
//
// All methods are safe for concurrent use. Close stops the sweep and every
// subscription and waits for their goroutines; it must not be called from
// inside a deliver, lost or restored callback.
type Memory struct {
	opt    MemoryConfig
	seed   maphash.Seed
	shards [memShards]memShard
	count  atomic.Int64 // entries held, for MaxRecords
	stats  MemoryStats

	subMu  sync.Mutex
	subs   map[*memSub]struct{}
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

type memKey struct {
	principal string
	h         Handle
}

type memRecord struct {
	value   []byte
	version uint64
	expires int64 // unix ns; 0: none
}

type onceKey struct{ principal, key string }

// onceEntry is one Once key: running (done open) or finished.
type onceEntry struct {
	done     chan struct{}
	finished bool
	value    []byte
	tooLarge bool  // applied, but the result was over MaxValueBytes
	expires  int64 // unix ns; 0: none
}

type memShard struct {
	mu   sync.Mutex
	recs map[memKey]*memRecord
	once map[onceKey]*onceEntry
	// gen moves after every Create, CompareAndSet and Delete of a record
	// of this shard (under mu, once the change is in recs) and at Close:
	// Generation.
	gen atomic.Uint64
}

// NewMemory returns a Memory with its background sweep running; Close
// stops it.
func NewMemory(opt MemoryConfig) *Memory {
	opt.fill()
	m := &Memory{opt: opt, seed: maphash.MakeSeed(), subs: make(map[*memSub]struct{}), done: make(chan struct{})}
	for i := range m.shards {
		m.shards[i].recs = make(map[memKey]*memRecord)
		m.shards[i].once = make(map[onceKey]*onceEntry)
	}
	m.wg.Add(1)
	go m.sweepLoop()
	return m
}

// Stats returns the store's counters.
func (m *Memory) Stats() *MemoryStats { return &m.stats }

// Len returns the number of entries held (handles and Once results,
// expired ones not yet swept included).
func (m *Memory) Len() int { return int(m.count.Load()) }

func (m *Memory) shard(s string) *memShard {
	return &m.shards[maphash.String(m.seed, s)%memShards]
}

func (m *Memory) isClosed() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// expiry turns a ttl argument into an absolute expiry (0: none).
func (m *Memory) expiry(now time.Time, ttl time.Duration) (int64, error) {
	if ttl < 0 {
		return 0, fmt.Errorf("state: negative ttl %v", ttl)
	}
	if ttl == 0 {
		ttl = m.opt.DefaultTTL
	}
	if ttl < 0 {
		return 0, nil
	}
	return now.Add(ttl).UnixNano(), nil
}

func (m *Memory) checkSize(v []byte) error {
	if m.opt.MaxValueBytes > 0 && len(v) > m.opt.MaxValueBytes {
		m.stats.TooLarge.Add(1)
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(v), m.opt.MaxValueBytes)
	}
	return nil
}

// reserve counts one more entry, or fails with ErrFull. With sweep (no
// shard lock held) it first tries to reclaim expired entries.
func (m *Memory) reserve(sweep bool) error {
	if m.opt.MaxRecords < 0 {
		m.count.Add(1)
		return nil
	}
	for try := 0; ; try++ {
		if m.count.Add(1) <= int64(m.opt.MaxRecords) {
			return nil
		}
		m.count.Add(-1)
		if try == 1 || !sweep {
			m.stats.Full.Add(1)
			return fmt.Errorf("%w (%d entries): %w", ErrFull, m.opt.MaxRecords, ErrUnavailable)
		}
		m.sweep(time.Now()) // reclaim expired entries once, then retry
	}
}

func expired(exp int64, now time.Time) bool { return exp != 0 && now.UnixNano() >= exp }

// Create implements Store.
func (m *Memory) Create(ctx context.Context, principal string, value []byte, ttl time.Duration) (Handle, error) {
	m.stats.Ops.Add(1)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if m.isClosed() {
		return "", errMemoryClosed
	}
	if err := m.checkSize(value); err != nil {
		return "", err
	}
	exp, err := m.expiry(time.Now(), ttl)
	if err != nil {
		return "", err
	}
	if err := m.reserve(true); err != nil {
		return "", err
	}
	rec := &memRecord{value: append([]byte(nil), value...), version: 1, expires: exp}
	for {
		h := NewHandle()
		k := memKey{principal, h}
		sh := m.shard(string(h))
		sh.mu.Lock()
		if _, dup := sh.recs[k]; !dup { // 128 random bits: a repeat is not expected
			sh.recs[k] = rec
			sh.gen.Add(1)
			sh.mu.Unlock()
			return h, nil
		}
		sh.mu.Unlock()
	}
}

// lookup returns the live record for k with sh locked, or nil (sh locked
// too). An expired record met here is removed.
func (m *Memory) lookup(sh *memShard, k memKey, now time.Time) *memRecord {
	r := sh.recs[k]
	if r != nil && expired(r.expires, now) {
		delete(sh.recs, k)
		m.count.Add(-1)
		m.stats.Expired.Add(1)
		return nil
	}
	return r
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, principal string, h Handle) (Record, error) {
	m.stats.Ops.Add(1)
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	if m.isClosed() {
		return Record{}, errMemoryClosed
	}
	if !h.Valid() {
		return Record{}, ErrNotFound
	}
	sh := m.shard(string(h))
	sh.mu.Lock()
	r := m.lookup(sh, memKey{principal, h}, time.Now())
	if r == nil {
		sh.mu.Unlock()
		return Record{}, ErrNotFound
	}
	rec := Record{Value: append([]byte(nil), r.value...), Version: r.version}
	if r.expires != 0 {
		rec.Expires = time.Unix(0, r.expires)
	}
	sh.mu.Unlock()
	return rec, nil
}

// Generation tells, more cheaply than a Get, that h's record has not
// changed since an earlier Get: it returns a number that moves after
// every Create, CompareAndSet or Delete that may concern h (it is the
// counter of h's shard, one of 32, so others move it too) and at Close,
// once the change is visible to Get. If g := Generation(h) is read before
// a Get of h and a later Generation(h) is still g, a Get made then would
// return the same result (the same record, or the same error) unless the
// record's Expires has passed since: the caller checks that. An atomic
// load and a hash of h: no lock, no copy. (A store shared between
// processes cannot know this without a round trip; only Memory has it.)
func (m *Memory) Generation(h Handle) uint64 {
	return m.shard(string(h)).gen.Load()
}

// CompareAndSet implements Store.
func (m *Memory) CompareAndSet(ctx context.Context, principal string, h Handle, version uint64, value []byte, ttl time.Duration) (uint64, error) {
	m.stats.Ops.Add(1)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if m.isClosed() {
		return 0, errMemoryClosed
	}
	if !h.Valid() {
		return 0, ErrNotFound
	}
	if err := m.checkSize(value); err != nil {
		return 0, err
	}
	now := time.Now()
	var exp int64
	if ttl != 0 {
		var err error
		if exp, err = m.expiry(now, ttl); err != nil {
			return 0, err
		}
	}
	v := append([]byte(nil), value...)
	sh := m.shard(string(h))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	r := m.lookup(sh, memKey{principal, h}, now)
	if r == nil {
		return 0, ErrNotFound
	}
	if r.version != version {
		return 0, fmt.Errorf("%w: at %d, not %d", ErrConflict, r.version, version)
	}
	// Replace rather than mutate: a reader never sees a half-written record.
	nr := &memRecord{value: v, version: r.version + 1, expires: r.expires}
	if ttl != 0 {
		nr.expires = exp
	}
	sh.recs[memKey{principal, h}] = nr
	sh.gen.Add(1)
	return nr.version, nil
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, principal string, h Handle) error {
	m.stats.Ops.Add(1)
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.isClosed() {
		return errMemoryClosed
	}
	if !h.Valid() {
		return nil
	}
	sh := m.shard(string(h))
	sh.mu.Lock()
	if _, ok := sh.recs[memKey{principal, h}]; ok {
		delete(sh.recs, memKey{principal, h})
		m.count.Add(-1)
		sh.gen.Add(1)
	}
	sh.mu.Unlock()
	return nil
}

// Once implements Store. A second caller with the same (principal, key)
// waits for the first; when fn fails nothing is remembered and a waiting
// caller runs its own fn. A result over MaxValueBytes is not kept: the key
// is remembered as applied and every caller gets ErrTooLarge. If fn
// panics, the key is released and the panic goes on.
func (m *Memory) Once(ctx context.Context, principal, key string, ttl time.Duration, fn func() ([]byte, error)) ([]byte, error) {
	m.stats.Ops.Add(1)
	if ttl < 0 {
		return nil, fmt.Errorf("state: negative ttl %v", ttl)
	}
	k := onceKey{principal, key}
	sh := m.shard(key)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if m.isClosed() {
			return nil, errMemoryClosed
		}
		now := time.Now()
		sh.mu.Lock()
		e := sh.once[k]
		if e != nil && e.finished && expired(e.expires, now) {
			delete(sh.once, k)
			m.count.Add(-1)
			m.stats.Expired.Add(1)
			e = nil
		}
		if e == nil {
			if err := m.reserve(false); err != nil {
				sh.mu.Unlock()
				return nil, err
			}
			e = &onceEntry{done: make(chan struct{})}
			sh.once[k] = e
			sh.mu.Unlock()
			return m.runOnce(sh, k, e, ttl, fn)
		}
		if e.finished {
			v, tooLarge := e.value, e.tooLarge
			sh.mu.Unlock()
			if tooLarge {
				return nil, fmt.Errorf("%w: the result of %q was not kept", ErrTooLarge, key)
			}
			return append([]byte(nil), v...), nil
		}
		sh.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.done:
			return nil, errMemoryClosed
		}
	}
}

// runOnce runs fn for the entry e this caller created.
func (m *Memory) runOnce(sh *memShard, k onceKey, e *onceEntry, ttl time.Duration, fn func() ([]byte, error)) (v []byte, err error) {
	ok := false
	defer func() {
		if ok {
			return
		}
		// fn failed or panicked: forget the key, wake the waiters.
		sh.mu.Lock()
		delete(sh.once, k)
		m.count.Add(-1)
		close(e.done)
		sh.mu.Unlock()
	}()
	v, err = fn()
	if err != nil {
		return nil, err
	}
	ok = true
	exp, _ := m.expiry(time.Now(), ttl) // ttl >= 0 checked by Once
	sh.mu.Lock()
	e.finished, e.expires = true, exp
	if m.opt.MaxValueBytes > 0 && len(v) > m.opt.MaxValueBytes {
		e.tooLarge = true
		m.stats.TooLarge.Add(1)
		err = fmt.Errorf("%w: the result of %q is %d bytes, limit %d", ErrTooLarge, k.key, len(v), m.opt.MaxValueBytes)
	} else {
		e.value = append([]byte(nil), v...)
	}
	close(e.done)
	sh.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (m *Memory) sweepLoop() {
	defer m.wg.Done()
	t := time.NewTicker(m.opt.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case now := <-t.C:
			m.sweep(now)
		}
	}
}

// sweep removes expired entries. Each shard is sampled SweepBatch/32
// entries at a time (map iteration starts at a random place), again while
// more than a quarter of a sample had expired, for at most 16 rounds; the
// shard lock is released between rounds.
func (m *Memory) sweep(now time.Time) {
	per := max(m.opt.SweepBatch/memShards, 1)
	for i := range m.shards {
		sh := &m.shards[i]
		for range 16 {
			if sampled, gone := m.sweepShard(sh, now, per); gone*4 <= sampled {
				break
			}
		}
	}
}

func (m *Memory) sweepShard(sh *memShard, now time.Time, per int) (sampled, gone int) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for k, r := range sh.recs {
		if sampled >= per {
			break
		}
		sampled++
		if expired(r.expires, now) {
			delete(sh.recs, k)
			gone++
		}
	}
	n := 0
	for k, e := range sh.once {
		if n >= per {
			break
		}
		n++
		if e.finished && expired(e.expires, now) {
			delete(sh.once, k)
			gone++
		}
	}
	sampled += n
	m.count.Add(-int64(gone))
	m.stats.Expired.Add(uint64(gone))
	return sampled, gone
}

// Close implements Store and Backplane: it stops the sweep and every
// subscription and waits for their goroutines. Later calls fail with an
// error matching ErrUnavailable. Idempotent.
func (m *Memory) Close() error {
	m.subMu.Lock()
	if !m.closed {
		m.closed = true
		close(m.done)
		for i := range m.shards {
			m.shards[i].gen.Add(1) // Get fails from now on
		}
	}
	m.subMu.Unlock()
	m.wg.Wait()
	return nil
}
