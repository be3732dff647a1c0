package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpwire/mcpwire/internal/netutil"
)

func isLoopbackHost(h string) bool { return netutil.IsLoopback(h) }

// keySetFetchTimeout bounds one fetch of the key set (with discovery, up
// to three requests), whatever the HTTP client's own timeout.
const keySetFetchTimeout = 3 * DefaultHTTPTimeout

// keySet is the issuer's key set, fetched on first use, refetched when
// older than Config.JWKSMaxAge or when a token names an unknown kid (at
// most once per Config.JWKSMinRefetch).
type keySet struct {
	v *Verifier

	mu       sync.Mutex
	url      string // Config.JWKSURL, or the issuer's jwks_uri once discovered
	keys     []jose.JSONWebKey
	have     bool          // keys were fetched at least once
	fetched  time.Time     // last successful fetch
	tried    time.Time     // last attempt
	unknown  time.Time     // last attempt caused by an unknown kid
	lastErr  error         // of the last attempt
	gen      int           // counts attempts
	inflight chan struct{} // closed when the running fetch ends; nil when none runs
}

func newKeySet(v *Verifier) *keySet {
	return &keySet{v: v, url: v.cfg.JWKSURL}
}

// key returns the key for a token signed with alg naming kid.
func (k *keySet) key(ctx context.Context, kid, alg string) (any, error) {
	now := k.v.now()
	k.mu.Lock()
	keys, have, gen := k.keys, k.have, k.gen
	stale := !have || (k.v.cfg.JWKSMaxAge > 0 && now.Sub(k.fetched) > k.v.cfg.JWKSMaxAge)
	k.mu.Unlock()
	if !stale {
		if key, err := pick(keys, kid, alg); err == nil {
			return key, nil
		}
	}
	if err := k.refresh(ctx, gen, stale); err != nil && !have {
		if errors.Is(err, ErrInvalidToken) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: no key set: %v", ErrInvalidToken, err)
	}
	k.mu.Lock()
	keys = k.keys
	k.mu.Unlock()
	return pick(keys, kid, alg)
}

// refresh fetches the set unless another caller did since gen, or an
// earlier attempt is too recent: for an unknown kid, the last one an
// unknown kid caused (JWKSMinRefetch); for a stale or missing set, the
// last one (one second: an issuer that was down is tried again soon, but
// not by every request).
//
// The fetch is the set's, not the caller's: it runs detached from ctx
// (its values kept, bounded by keySetFetchTimeout) and once at a time;
// callers arriving while it runs wait for it, each until its own ctx
// ends. A caller that leaves does not abort it: were the fetch bound to
// the request, a client could send a token with an unknown kid and
// disconnect, aborting the fetch and still spending the refetch interval,
// and so keep a rotated key (or, at a cold start, every key) out.
func (k *keySet) refresh(ctx context.Context, gen int, stale bool) error {
	k.mu.Lock()
	if ch := k.inflight; ch != nil { // someone's fetch is running: share it
		k.mu.Unlock()
		return k.await(ctx, ch)
	}
	if k.gen != gen { // fetched (or tried) since the caller looked
		err := k.lastErr
		k.mu.Unlock()
		return err
	}
	now := k.v.now()
	last, wait := k.unknown, k.v.cfg.JWKSMinRefetch
	if stale {
		last, wait = k.tried, min(wait, time.Second)
	}
	if !last.IsZero() && now.Sub(last) < wait {
		err := k.lastErr
		k.mu.Unlock()
		if err == nil {
			k.v.stats.refetchLimited()
		}
		return err
	}
	k.tried = now
	if !stale {
		k.unknown = now
	}
	k.gen++
	ch := make(chan struct{})
	k.inflight = ch
	url := k.url
	k.mu.Unlock()
	go k.run(context.WithoutCancel(ctx), url, ch)
	return k.await(ctx, ch)
}

// await waits for the fetch that closes ch, or for ctx: the fetch's
// error, or the caller's.
func (k *keySet) await(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.lastErr
	case <-ctx.Done():
		return fmt.Errorf("%w: key set: %v", ErrInvalidToken, ctx.Err())
	}
}

// run fetches the set from url and records the outcome, then closes done.
func (k *keySet) run(ctx context.Context, url string, done chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, keySetFetchTimeout)
	defer cancel()
	keys, url, err := k.fetch(ctx, url)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inflight = nil
	defer close(done)
	k.lastErr = err
	if err != nil {
		k.v.log.Warn("auth: fetching the issuer's key set failed", "issuer", k.v.cfg.Issuer, "err", err)
		return
	}
	k.url, k.keys, k.have, k.fetched = url, keys, true, k.v.now()
	k.v.stats.fetched()
}

func (k *keySet) fetch(ctx context.Context, url string) ([]jose.JSONWebKey, string, error) {
	if url == "" {
		md, err := k.v.discover(ctx)
		if err != nil {
			return nil, "", err
		}
		url = md.JWKSURI
	}
	b, err := k.v.get(ctx, url)
	if err != nil {
		return nil, "", err
	}
	keys, err := decodeJWKS(b)
	return keys, url, err
}

// discover fetches the issuer's metadata.
func (v *Verifier) discover(ctx context.Context) (*serverMetadata, error) {
	urls, err := serverMetadataURLs(v.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, u := range urls {
		b, err := v.get(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		md, err := decodeServerMetadata(b, v.cfg.Issuer)
		if err != nil {
			return nil, err
		}
		return md, nil
	}
	return nil, fmt.Errorf("auth: no metadata for issuer %s: %w", v.cfg.Issuer, errors.Join(errs...))
}

// get fetches u (200 only), bounded by MaxMetadataBytes.
func (v *Verifier) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	return readBounded(resp, u, v.cfg.MaxMetadataBytes)
}

func readBounded(resp *http.Response, u string, limit int) ([]byte, error) {
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("auth: %s: status %d", u, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", u, err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("auth: %s: larger than %d bytes", u, limit)
	}
	return b, nil
}

// pick returns the key of keys that verifies alg and is named kid; a
// token without kid may use the set's only key for alg.
func pick(keys []jose.JSONWebKey, kid, alg string) (any, error) {
	var found any
	n := 0
	for i := range keys {
		k := &keys[i]
		if kid != "" && k.KeyID != kid {
			continue
		}
		if (k.Algorithm != "" && k.Algorithm != alg) || !fits(k.Key, alg) {
			continue
		}
		found = k.Key
		n++
	}
	switch {
	case n == 0 && kid != "":
		return nil, fmt.Errorf("%w: unknown key id for %s", ErrInvalidToken, alg)
	case n == 0:
		return nil, fmt.Errorf("%w: no key for %s", ErrInvalidToken, alg)
	case n > 1 && kid == "":
		return nil, fmt.Errorf("%w: no kid, and several keys for %s", ErrInvalidToken, alg)
	}
	return found, nil
}

// fits reports whether key is a public key of the type alg signs with
// (RFC 7518 §3.1; EdDSA: RFC 8037).
func fits(key any, alg string) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
			return k.N.BitLen() >= 2048
		}
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return k.Curve == elliptic.P256()
		case "ES384":
			return k.Curve == elliptic.P384()
		case "ES512":
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}
