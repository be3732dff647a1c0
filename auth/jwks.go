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

// keySet is the issuer's key set, fetched on first use, refetched when
// older than Config.JWKSMaxAge or when a token names an unknown kid (at
// most once per Config.JWKSMinRefetch).
type keySet struct {
	v   *Verifier
	sem chan struct{} // one fetch at a time; waiters give up with their context

	mu      sync.Mutex
	url     string // Config.JWKSURL, or the issuer's jwks_uri once discovered
	keys    []jose.JSONWebKey
	have    bool      // keys were fetched at least once
	fetched time.Time // last successful fetch
	tried   time.Time // last attempt
	unknown time.Time // last attempt caused by an unknown kid
	lastErr error     // of the last attempt
	gen     int       // counts attempts
}

func newKeySet(v *Verifier) *keySet {
	return &keySet{v: v, sem: make(chan struct{}, 1), url: v.cfg.JWKSURL}
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
func (k *keySet) refresh(ctx context.Context, gen int, stale bool) error {
	select {
	case k.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: key set: %v", ErrInvalidToken, ctx.Err())
	}
	defer func() { <-k.sem }()
	k.mu.Lock()
	if k.gen != gen { // fetched (or tried) while we waited
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
	url := k.url
	k.mu.Unlock()

	keys, url, err := k.fetch(ctx, url)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastErr = err
	if err != nil {
		k.v.log.Warn("auth: fetching the issuer's key set failed", "issuer", k.v.cfg.Issuer, "err", err)
		return err
	}
	k.url, k.keys, k.have, k.fetched = url, keys, true, k.v.now()
	k.v.stats.fetched()
	return nil
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
