package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// introspection is the part of an RFC 7662 §2.2 answer the verifier reads.
type introspection struct {
	Active    bool            `json:"active"`
	Scope     string          `json:"scope"`
	ClientID  string          `json:"client_id"`
	Subject   string          `json:"sub"`
	Audience  json.RawMessage `json:"aud"`
	Issuer    string          `json:"iss"`
	Expiry    int64           `json:"exp"`
	NotBefore int64           `json:"nbf"`
	ID        string          `json:"jti"`
	TokenType string          `json:"token_type"`
	Cnf       *struct {
		X5T string `json:"x5t#S256"`
	} `json:"cnf"`
}

// introspect asks the introspection endpoint about token (RFC 7662 §2.1,
// client_secret_basic). An inactive token, or one for another issuer or
// audience, or expired, is refused; aud must be present (a token the
// endpoint does not say is for this resource is not accepted); iss, when
// the answer has one and Config.Issuer is set, must equal it.
//
// An inactive answer is remembered (negCache) and the same token refused
// again without a request; at most Config.MaxIntrospections requests are
// in flight, one past them is refused with streamhttp.ErrAuthUnavailable
// (503) rather than queued: the endpoint is what a flood of made-up
// tokens would otherwise reach, one request each.
func (v *Verifier) introspect(ctx context.Context, token string) (*Principal, string, error) {
	var sum [sha256.Size]byte
	if v.negative != nil {
		sum = sha256.Sum256([]byte(token))
		if v.negative.has(sum, v.now()) {
			v.stats.IntrospectionCacheHits.Add(1)
			return nil, "", errInactive
		}
	}
	if v.intro != nil {
		select {
		case v.intro <- struct{}{}:
			defer func() { <-v.intro }()
		default:
			v.stats.IntrospectionsLimited.Add(1)
			return nil, "", errIntrospectionBusy
		}
	}
	in := v.cfg.Introspection
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret)) // RFC 6749 §2.3.1
	v.stats.Introspections.Add(1)
	resp, err := v.hc.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%w: introspection: %v", ErrInvalidToken, err)
	}
	defer resp.Body.Close()
	b, err := readBounded(resp, in.URL, v.cfg.MaxMetadataBytes)
	if err != nil {
		return nil, "", fmt.Errorf("%w: introspection: %v", ErrInvalidToken, err)
	}
	r, err := decodeIntrospection(b)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if !r.Active {
		if v.negative != nil {
			v.negative.add(sum, v.now())
		}
		return nil, "", errInactive
	}
	if r.TokenType != "" && !strings.EqualFold(r.TokenType, "Bearer") && !strings.EqualFold(r.TokenType, "access_token") {
		return nil, "", fmt.Errorf("%w: token_type %q", ErrInvalidToken, r.TokenType)
	}
	aud := audList(r.Audience)
	iss := r.Issuer
	if v.cfg.Issuer == "" || iss == "" {
		// No issuer configured, or none in the answer (iss is optional in
		// RFC 7662): the configured endpoint is the authority.
		iss = v.cfg.Issuer
	}
	var exp, nbf time.Time
	if r.Expiry > 0 {
		exp = time.Unix(r.Expiry, 0)
	}
	if r.NotBefore > 0 {
		nbf = time.Unix(r.NotBefore, 0)
	}
	if err := v.checkClaims(iss, aud, exp, nbf); err != nil {
		return nil, "", err
	}
	p := &Principal{Subject: r.Subject, ClientID: r.ClientID, Issuer: r.Issuer, Audience: aud,
		Expiry: exp, TokenID: r.ID, Scopes: strings.Fields(r.Scope), Introspected: true}
	if p.String() == "" {
		return nil, "", errNoIdentity
	}
	cnf := ""
	if r.Cnf != nil {
		cnf = r.Cnf.X5T
	}
	return p, cnf, nil
}

var (
	errInactive = fmt.Errorf("%w: inactive", ErrInvalidToken)
	// errIntrospectionBusy is a 503: the token was not checked.
	errIntrospectionBusy = fmt.Errorf("auth: too many introspections in flight (Config.MaxIntrospections): %w", streamhttp.ErrAuthUnavailable)
)

// negCache remembers tokens an introspection endpoint said were inactive,
// by SHA-256 (never the token itself), for ttl; it holds at most limit of
// them: when full, expired entries are dropped, and if none had expired
// the oldest half goes (a flood of distinct bad tokens costs requests
// again, never memory).
type negCache struct {
	ttl   time.Duration
	limit int

	mu sync.Mutex
	m  map[[sha256.Size]byte]time.Time // the time each entry expires
}

func newNegCache(ttl time.Duration, limit int) *negCache {
	return &negCache{ttl: ttl, limit: limit, m: map[[sha256.Size]byte]time.Time{}}
}

func (c *negCache) has(k [sha256.Size]byte, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exp, ok := c.m[k]
	if ok && !now.Before(exp) {
		delete(c.m, k)
		return false
	}
	return ok
}

func (c *negCache) add(k [sha256.Size]byte, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.limit {
		for e, exp := range c.m {
			if !now.Before(exp) {
				delete(c.m, e)
			}
		}
		if len(c.m) >= c.limit {
			// Expiry order is insertion order (one ttl): drop the half
			// that expires first.
			exps := make([]time.Time, 0, len(c.m))
			for _, exp := range c.m {
				exps = append(exps, exp)
			}
			slices.SortFunc(exps, time.Time.Compare)
			cut := exps[len(exps)/2]
			for e, exp := range c.m {
				if !exp.After(cut) {
					delete(c.m, e)
				}
			}
		}
	}
	c.m[k] = now.Add(c.ttl)
}

// decodeIntrospection decodes an introspection answer.
func decodeIntrospection(b []byte) (*introspection, error) {
	var r introspection
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("auth: introspection answer: %w", err)
	}
	return &r, nil
}

// audList reads aud, a string or an array of strings.
func audList(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return []string{s}
	}
	return nil
}
