package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
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

// tokenLen is the length of a lease token after its tag: newToken's 32
// hex digits.
const tokenLen = 32

// parseOnce reads a Once key's value: its tag and what follows it (the
// lease token or the result). A value of another shape (an unknown tag,
// a token of the wrong length, "x" with a payload) is refused: it was not
// written by this package.
func parseOnce(b []byte) (tag byte, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	switch tag, rest = b[0], b[1:]; tag {
	case tagDone:
		return tag, rest, true
	case tagTooLarge:
		if len(rest) != 0 {
			return 0, nil, false
		}
		return tag, rest, true
	case tagPending:
		if len(rest) != tokenLen {
			return 0, nil, false
		}
		for _, c := range rest {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return 0, nil, false
			}
		}
		return tag, rest, true
	}
	return 0, nil, false
}

// ErrOnceNotStored is returned by Once when the call ran but its result
// could not be stored (Redis unreachable until the lease ran out): the
// result is withheld so that the client retries (it matches
// state.ErrUnavailable: HTTP 503) and, if a later attempt stored it, gets
// it then instead of the call running again.
var ErrOnceNotStored = fmt.Errorf("redisstate: once: the result could not be stored: %w", state.ErrUnavailable)

// ErrOnceLeaseLost is returned by Once when the call ran but its lease
// had been lost meanwhile (renewals failed past OnceLease and another
// caller took the key): another replica may have run the same call at the
// same time. The result is withheld (it matches state.ErrUnavailable) so
// that a retry reads the result the key holds.
var ErrOnceLeaseLost = fmt.Errorf("redisstate: once: the lease was lost while the call ran: %w", state.ErrUnavailable)

var errOnceMalformed = errors.New("redisstate: once: malformed key value")

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
// expiring after ARGV[3] ms ("0": never). A key that holds exactly that
// result already is done too: a retry after a finish whose reply was lost
// (it cannot be another's lease, which starts with another tag).
var onceFinish = newScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[2] then return 1 end
if cur ~= ARGV[1] then return 0 end
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
// ErrTooLarge.
//
// Never silently twice: if the result cannot be stored (Redis lost after
// fn ran), storing is retried while the lease lasts; if it still fails
// the caller gets ErrOnceNotStored (HTTP 503), not the result, and the
// lease is left to expire (Stats.OnceNotStored). A lease whose renewal
// failed past OnceLease is counted (Stats.OnceLeaseLost) and logged at
// once; if another caller took the key meanwhile, the caller gets
// ErrOnceLeaseLost.
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
			err := s.checkLossOnMiss(ctx, s.opt.OnceLostWindow)
			if err == nil {
				err = s.lostMiss(s.opt.OnceLostWindow, ttl)
			}
			if err != nil {
				s.releaseOnce(ctx, k, token)
				return nil, err
			}
			return s.runOnce(ctx, k, key, token, lease, px, fn)
		}
		tag, rest, ok := parseOnce(cur)
		if !ok {
			s.stats.Malformed.Add(1)
			return nil, fmt.Errorf("%w: %q", errOnceMalformed, key)
		}
		switch tag {
		case tagDone:
			return rest, nil
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

// releaseOnce drops the lease token holds on k (it expires by itself if
// this fails).
func (s *Store) releaseOnce(ctx context.Context, k, token string) {
	cctx, cancel := s.opCtx(context.WithoutCancel(ctx))
	s.stats.Ops.Add(1)
	if e := onceRelease.Exec(cctx, s.c, []string{k}, []string{token}).Error(); e != nil {
		s.stats.Errors.Add(1)
	}
	cancel()
}

// onceLease tracks the lease of one running call.
type onceLease struct {
	lastOK  atomic.Int64 // UnixNano of the last time the lease was known held
	flagged atomic.Bool  // counted in OnceLeaseLost
	fnDone  atomic.Bool  // fn returned: storing the result decides (a renewal racing it finds the result)
}

// flag counts and logs, once, a lease that may have been lost.
func (s *Store) flagLease(l *onceLease, key, why string) {
	if l.flagged.CompareAndSwap(false, true) {
		s.stats.OnceLeaseLost.Add(1)
		s.log.Warn("redisstate: a running Once call may have lost its lease: another replica may run it concurrently", "key", key, "why", why)
	}
}

// runOnce runs fn for the caller that took k with token.
func (s *Store) runOnce(ctx context.Context, k, key, token, lease string, px int64, fn func() ([]byte, error)) (v []byte, err error) {
	l := &onceLease{}
	l.lastOK.Store(time.Now().UnixNano())
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go s.renew(k, key, token, lease, l, stop, renewed)
	stopRenew := func() {
		if stop != nil {
			close(stop)
			<-renewed
			stop = nil
		}
	}
	ok := false
	defer func() {
		stopRenew()
		if !ok {
			s.releaseOnce(ctx, k, token)
		}
	}()
	v, err = fn()
	l.fnDone.Store(true)
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
	// Store the result; on failure try again (the lease is still renewed)
	// while the lease may still be held.
	wait := 10 * time.Millisecond
	for {
		n, e := s.finishOnce(ctx, k, token, stored, px)
		if e == nil && n == 1 {
			return v, err
		}
		if e == nil { // the key is no longer ours
			s.flagLease(l, key, "the key was taken by another caller")
			return nil, fmt.Errorf("%w: %q", ErrOnceLeaseLost, key)
		}
		s.stats.Errors.Add(1)
		if s.isClosed() || time.Since(time.Unix(0, l.lastOK.Load()))+wait >= s.opt.OnceLease {
			s.stats.OnceNotStored.Add(1)
			s.log.Warn("redisstate: a Once call ran but its result could not be stored; the caller is answered unavailable", "key", key, "err", e)
			return nil, fmt.Errorf("%w: %q: %w", ErrOnceNotStored, key, e)
		}
		time.Sleep(wait)
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// finishOnce stores the result of the call token ran on k: 1 when the key
// holds it now, 0 when the key is another's.
func (s *Store) finishOnce(ctx context.Context, k, token, stored string, px int64) (int64, error) {
	cctx, cancel := s.opCtx(context.WithoutCancel(ctx))
	defer cancel()
	s.stats.Ops.Add(1)
	res, rerr := s.execReplicated(cctx, onceFinish, []string{k}, []string{token, stored, strconv.FormatInt(px, 10)})
	n, err := res.AsInt64()
	if err == nil && n == 1 && rerr != nil {
		return 0, rerr // stored, but not on enough replicas: tried again (the script sees its own result) or ErrOnceNotStored
	}
	return n, err
}

// renew keeps the lease on k while fn runs. A renewal that finds the key
// gone or taken, or renewals failing past OnceLease, flag the run.
func (s *Store) renew(k, key, token, lease string, l *onceLease, stop <-chan struct{}, done chan<- struct{}) {
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
			n, err := onceRenew.Exec(ctx, s.c, []string{k}, []string{token, lease}).AsInt64()
			cancel()
			switch {
			case err != nil:
				s.stats.Errors.Add(1)
				if time.Since(time.Unix(0, l.lastOK.Load())) >= s.opt.OnceLease {
					s.flagLease(l, key, "renewals failed past OnceLease")
				}
			case n == 0:
				if !l.fnDone.Load() { // else the key may hold the result already
					s.flagLease(l, key, "the key expired or was taken")
				}
			default:
				l.lastOK.Store(time.Now().UnixNano())
			}
		}
	}
}
