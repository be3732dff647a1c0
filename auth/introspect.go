package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
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
func (v *Verifier) introspect(ctx context.Context, token string) (*Principal, string, error) {
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
		return nil, "", fmt.Errorf("%w: inactive", ErrInvalidToken)
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
