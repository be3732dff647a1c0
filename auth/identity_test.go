package auth_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestPrincipalIdentity: the principal's identity (String, the key of
// mrtr requestState, transport/legacy sessions and the engine's
// per-principal limits) is never empty and never shared by two callers:
// tokens without sub are told apart by their client (client_id, else
// azp), a sub never equals a client, and a token naming no caller at all
// is refused (401 invalid_token), as a JWT and introspected.
func TestPrincipalIdentity(t *testing.T) {
	fixture.LeakCheck(t)
	k1 := newECKey(t, "k1")
	as := newTestAS(t, k1)
	const res = "https://mcp.example/mcp"
	v, err := auth.New(auth.Config{Resource: res, Issuer: as.issuer(),
		Introspection: &auth.Introspection{URL: as.issuer() + "/introspect", ClientID: as.rsID, ClientSecret: as.rsSecret}})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour).Unix()
	jwtWith := func(extra map[string]any) string {
		c := map[string]any{"iss": as.issuer(), "aud": res, "exp": exp}
		for k, x := range extra {
			c[k] = x
		}
		return k1.sign(t, c)
	}
	opaqueWith := func(name string, extra map[string]any) string {
		c := map[string]any{"active": true, "aud": res, "iss": as.issuer(), "exp": exp}
		for k, x := range extra {
			c[k] = x
		}
		as.addOpaque(name, c)
		return name
	}
	seen := map[string]string{}
	for _, tc := range []struct{ name, token string }{
		{"jwt client a", jwtWith(map[string]any{"client_id": "a"})},
		{"jwt client b", jwtWith(map[string]any{"client_id": "b"})},
		{"jwt azp c", jwtWith(map[string]any{"azp": "c"})},
		{"jwt sub a", jwtWith(map[string]any{"sub": "a"})},
		{"jwt sub client:a", jwtWith(map[string]any{"sub": "client:a", "client_id": "a"})},
		{"opaque client d", opaqueWith("opaque-d", map[string]any{"client_id": "d"})},
		{"opaque client e", opaqueWith("opaque-e", map[string]any{"client_id": "e"})},
	} {
		p, err := v.Verify(ctxT(t), tc.token)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		id := p.String()
		if id == "" {
			t.Errorf("%s: empty identity", tc.name)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s are one principal %q", other, tc.name, id)
		}
		seen[id] = tc.name
	}
	for _, tc := range []struct{ name, token string }{
		{"jwt without sub and client_id", jwtWith(nil)},
		{"introspected without sub and client_id", opaqueWith("opaque-none", nil)},
	} {
		if p, err := v.Verify(ctxT(t), tc.token); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%s: %v (%q), want ErrInvalidToken", tc.name, err, p)
		}
	}
	var nilP *auth.Principal
	if s := nilP.String(); s != "" {
		t.Errorf("nil principal: %q", s)
	}
}
