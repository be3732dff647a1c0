package auth

import (
	"context"
	"crypto/x509"
	"slices"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// Principal is what a verified token says about its caller; it is the
// principal the Verifier gives the transport, which handlers read with
// PrincipalOf. Treat it as read-only.
type Principal struct {
	// Subject is the token's sub.
	Subject string
	// ClientID is the OAuth client the token was issued to (client_id,
	// else azp).
	ClientID string
	// Issuer is the token's iss.
	Issuer string
	// Audience is the token's aud.
	Audience []string
	// Scopes are the scopes granted (scope, or scp).
	Scopes []string
	// Expiry is the token's exp (zero when an introspection answer had none).
	Expiry time.Time
	// TokenID is the token's jti, when it has one.
	TokenID string
	// Certificate is the verified TLS client certificate of the request
	// (mTLS), nil without one.
	Certificate *x509.Certificate
	// Introspected reports that an introspection endpoint vouched for the
	// token (an opaque token), rather than a signature.
	Introspected bool
}

// HasScope reports whether scope s was granted.
func (p *Principal) HasScope(s string) bool { return p != nil && slices.Contains(p.Scopes, s) }

// String returns the subject.
func (p *Principal) String() string { return p.Subject }

// PrincipalOf returns the Principal of the call, or nil when the call was
// not authenticated by a Verifier.
func PrincipalOf(c *engine.Call) *Principal {
	p, _ := c.Principal().(*Principal)
	return p
}

// PrincipalFrom returns the Principal of a request to a handler mounted on
// the listener (streamhttp.Config.Mounts), or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := streamhttp.PrincipalFrom(ctx).(*Principal)
	return p
}

// missing returns the scopes of need that p lacks.
func (p *Principal) missing(need []string) bool {
	for _, s := range need {
		if !p.HasScope(s) {
			return true
		}
	}
	return false
}
