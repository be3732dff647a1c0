package redisstate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/state"
)

// A Once key holds one tagged string: "p" and a token while a replica
// runs the call (expiring after OnceLease unless renewed), "d" and the
// result once it is done (expiring after the Once ttl), or "x" when the
// call was applied but its result was over MaxValueBytes.
const (
	tagPending  = 'p'
	tagDone     = 'd'
	tagTooLarge = 'x'
)

// onceAcquire returns the key's current value, or "" after taking it for
// ARGV[1] with PX ARGV[2].
var onceAcquire = rueidis.NewLuaScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''`)

// onceRenew extends the lease of the holder ARGV[1] to ARGV[2] ms.
var onceRenew = rueidis.NewLuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

// onceFinish replaces the holder ARGV[1]'s lease by the result ARGV[2],
// expiring after ARGV[3] ms ("0": never).
var onceFinish = rueidis.NewLuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1`)

// onceRelease drops the holder ARGV[1]'s lease.
var onceRelease = rueidis.NewLuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Once implements state.Store across replicas: the first caller takes the
// key with a lease (OnceLease, renewed while fn runs) and runs fn; the
// others, on any replica, poll until the result is stored. When fn fails
// (or panics) the lease is dropped, nothing is remembered and a waiting
// caller takes the key and runs its own fn. A result over MaxValueBytes is
// not kept: the key is remembered as applied and every caller gets
// ErrTooLarge. If the result cannot be stored (Redis lost after fn ran),
// the caller still gets it, and the failure is counted in Stats.Errors.
func (s *Store) Once(ctx context.Context, principal, key string, ttl time.Duration, fn func() ([]byte, error)) ([]byte, error) {
	px, err := s.ttlFor(ttl)
	if err != nil {
		return nil, err
	}
	k := s.onceKey(principal, key)
	token := string(tagPending) + newToken()
	lease := strconv.FormatInt(s.opt.OnceLease.Milliseconds(), 10)
	wait := 2 * time.Millisecond
	for {
		if s.isClosed() {
			return nil, errClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cctx, cancel := s.opCtx(ctx)
		s.stats.Ops.Add(1)
		cur, err := onceAcquire.Exec(cctx, s.c, []string{k}, []string{token, lease}).AsBytes()
		cancel()
		if err != nil {
			return nil, s.fail(ctx, "once", err)
		}
		if len(cur) == 0 {
			return s.runOnce(ctx, k, key, token, lease, px, fn)
		}
		switch cur[0] {
		case tagDone:
			return cur[1:], nil
		case tagTooLarge:
			return nil, fmt.Errorf("%w: the result of %q was not kept", state.ErrTooLarge, key)
		}
		// Another caller holds the key: wait for its result.
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-s.done:
			t.Stop()
			return nil, errClosed
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// runOnce runs fn for the caller that took k with token.
func (s *Store) runOnce(ctx context.Context, k, key, token, lease string, px int64, fn func() ([]byte, error)) (v []byte, err error) {
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go s.renew(k, token, lease, stop, renewed)
	ok := false
	defer func() {
		close(stop)
		<-renewed
		if ok {
			return
		}
		cctx, cancel := s.opCtx(context.WithoutCancel(ctx))
		s.stats.Ops.Add(1)
		if e := onceRelease.Exec(cctx, s.c, []string{k}, []string{token}).Error(); e != nil {
			s.stats.Errors.Add(1) // the lease expires by itself
		}
		cancel()
	}()
	v, err = fn()
	if err != nil {
		return nil, err
	}
	ok = true
	stored := string(tagDone) + rueidis.BinaryString(v)
	if s.opt.MaxValueBytes > 0 && len(v) > s.opt.MaxValueBytes {
		s.stats.TooLarge.Add(1)
		stored = string(tagTooLarge)
		err = fmt.Errorf("%w: the result of %q is %d bytes, limit %d", state.ErrTooLarge, key, len(v), s.opt.MaxValueBytes)
		v = nil
	}
	cctx, cancel := s.opCtx(context.WithoutCancel(ctx))
	defer cancel()
	s.stats.Ops.Add(1)
	if e := onceFinish.Exec(cctx, s.c, []string{k}, []string{token, stored, strconv.FormatInt(px, 10)}).Error(); e != nil {
		s.stats.Errors.Add(1)
	}
	return v, err
}

// renew keeps the lease on k while fn runs.
func (s *Store) renew(k, token, lease string, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.opt.OnceLease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.opt.OpTimeout)
			s.stats.Ops.Add(1)
			if err := onceRenew.Exec(ctx, s.c, []string{k}, []string{token, lease}).Error(); err != nil {
				s.stats.Errors.Add(1)
			}
			cancel()
		}
	}
}
