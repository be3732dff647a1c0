package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// Authorizer authorizes the requests of a Dial transport
// (Config.Auth). Package client/oauth implements it with the
// MCP authorization flow (OAuth 2.1: protected resource and authorization
// server metadata discovery, client registration, PKCE authorization
// code or client credentials, refresh, scope step-up). Its methods may be
// called from several goroutines at once.
type Authorizer interface {
	// Authorization returns the Authorization header value for the next
	// request ("Bearer <token>"), "" for none yet. It may block to refresh
	// an expired token; an error fails the request before it is sent.
	Authorization(ctx context.Context) (string, error)
	// Challenge handles a 401 or 403 reply to a request that carried the
	// Authorization value sent ("" when none): header holds the reply's
	// WWW-Authenticate (several fields joined by ", ") and DPoP-Nonce. It
	// returns nil when the request should be sent again with a new
	// Authorization value (or DPoP proof), or why not. When sent is no
	// longer the current value (another request already obtained a new
	// token), it returns nil at once.
	Challenge(ctx context.Context, status int, header http.Header, sent string) error
}

// ProofAuthorizer is an Authorizer that binds requests to a key (DPoP,
// RFC 9449). A request whose Authorization value uses the DPoP scheme
// also carries a DPoP header with the proof it returns for the request's
// method and URL (no query), made fresh for each request sent.
type ProofAuthorizer interface {
	Authorizer
	Proof(method, url, authorization string) (string, error)
}

// maxAuthRetries bounds the times one request is sent again after a
// challenge its Authorizer answered.
const maxAuthRetries = 3

// challengeBodyMax bounds the body of a 401 or 403 reply read to keep the
// connection.
const challengeBodyMax = 64 << 10

// challenge is a 401 or 403 reply, read whole.
type challenge struct {
	status   int
	www      string
	nonce    string // DPoP-Nonce
	sent     string // the Authorization value the request carried
	body     []byte
	reusable bool  // the connection can carry another request
	err      error // reading the body failed
}

func isChallenge(status int) bool { return status == 401 || status == 403 }

// readChallenge reads the rest of a 401 or 403 reply on c; the caller
// then gives c back (ch.reusable) or closes it.
func readChallenge(c *wconn) *challenge {
	ch := &challenge{status: c.h.Status, www: c.h.WWWAuthenticate, nonce: c.h.DPoPNonce, sent: c.authz}
	c.body.Reset(&c.br, &c.h)
	body, err := c.readBody(challengeBodyMax)
	switch {
	case errors.Is(err, mcpclient.ErrTooLarge):
		ch.body = body
	case err != nil:
		ch.err = bodyError(err)
	default:
		ch.body = body
		ch.reusable = c.reusable()
	}
	return ch
}

// authorization is the Authorization value for the next request ("" when
// Config.Auth is nil), and its DPoP proof when it uses that scheme;
// method and target are the request's.
func (t *transport) authorization(ctx context.Context, method, target string) (auth, proof string, err error) {
	if t.opts.Auth == nil {
		return "", "", nil
	}
	v, err := t.opts.Auth.Authorization(ctx)
	if err != nil {
		if e := ctx.Err(); e != nil {
			return "", "", e
		}
		return "", "", fmt.Errorf("streamhttp: authorization: %w", err)
	}
	if !validHeaderValue(v) {
		return "", "", errors.New("streamhttp: authorization: the Authorizer returned a value with control characters")
	}
	if len(v) > 5 && strings.EqualFold(v[:5], "DPoP ") {
		pa, ok := t.opts.Auth.(ProofAuthorizer)
		if !ok {
			return "", "", errors.New("streamhttp: authorization: a DPoP token from an Authorizer that makes no proofs")
		}
		u := *t.base
		u.RawQuery, u.ForceQuery = "", false
		if target != "" {
			p, _, _ := strings.Cut(target, "?")
			if ref, err := url.Parse(p); err == nil {
				u = *t.base.ResolveReference(ref)
				u.RawQuery, u.ForceQuery = "", false
			}
		}
		if proof, err = pa.Proof(method, u.String(), v); err != nil {
			return "", "", fmt.Errorf("streamhttp: DPoP proof: %w", err)
		}
		if !validHeaderValue(proof) {
			return "", "", errors.New("streamhttp: DPoP proof with control characters")
		}
	}
	return v, proof, nil
}

// answer hands a challenge to the Authorizer: nil means send the request
// again; otherwise the error wraps the reply's *client.StatusError.
func (t *transport) answer(ctx context.Context, ch *challenge) error {
	if t.closed.Load() {
		return mcpclient.ErrClosed
	}
	h := http.Header{}
	if ch.www != "" {
		h.Set("WWW-Authenticate", ch.www)
	}
	if ch.nonce != "" {
		h.Set("DPoP-Nonce", ch.nonce)
	}
	err := t.opts.Auth.Challenge(ctx, ch.status, h, ch.sent)
	if err == nil {
		return nil
	}
	if e := ctx.Err(); e != nil {
		return e
	}
	return fmt.Errorf("streamhttp: authorization failed: %w (%w)", err, statusError(ch.status, ch.body))
}

// appendAuth writes the Authorization header of the request c carries,
// and its DPoP proof.
func appendAuth(b []byte, c *wconn) []byte {
	b = append(b, "Authorization: "...)
	b = append(b, c.authz...)
	b = append(b, "\r\n"...)
	if c.dpop != "" {
		b = append(b, "DPoP: "...)
		b = append(b, c.dpop...)
		b = append(b, "\r\n"...)
	}
	return b
}
