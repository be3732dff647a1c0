package auth

import (
	"context"
	"crypto/x509"
	"fmt"
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

// String is the caller's identity, the key every per-caller state is
// bound to (mrtr requestState, transport/legacy sessions, the engine's
// per-principal limits): "sub:" and the token's sub, or, for a token
// without sub (a client credentials token, whose caller is the client),
// "client:" and its client_id. The prefixes keep the two apart, so a sub
// can never pose as a client. The Verifier refuses a token with neither,
// so a verified Principal's String is never empty; a nil *Principal's is
// "" (no identity: the engine and transport/legacy treat it as
// anonymous).
func (p *Principal) String() string {
	switch {
	case p == nil:
		return ""
	case p.Subject != "":
		return "sub:" + p.Subject
	case p.ClientID != "":
		return "client:" + p.ClientID
	}
	return ""
}

// errNoIdentity refuses a token that names no caller: neither sub nor
// client_id (nor azp). Every such token would otherwise be one principal.
var errNoIdentity = fmt.Errorf("%w: neither sub nor client_id: the token names no caller", ErrInvalidToken)

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
