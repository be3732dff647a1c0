package legacy

import "testing"

// idStringer is a principal whose String is its id, nil-receiver safe.
type idStringer struct{ id string }

func (p *idStringer) String() string {
	if p == nil {
		return ""
	}
	return p.id
}

// TestPrincipalOfNoIdentity: a principal without an identity (a typed
// nil, an empty String or string) is anonymous, not one "legacy:"
// principal every such caller shares (sessions and
// MaxSessionsPerPrincipal); principals with one keep their own keys.
func TestPrincipalOfNoIdentity(t *testing.T) {
	for i, tc := range []struct {
		p          any
		key, owner string
	}{
		{nil, "legacy", ""},
		{(*idStringer)(nil), "legacy", ""},
		{&idStringer{""}, "legacy", ""},
		{"", "legacy", ""},
		{(*struct{ A int })(nil), "legacy", ""},
		{&idStringer{"sub:alice"}, "legacy:sub:alice", "legacy:sub:alice"},
		{"bob", "legacy:bob", "legacy:bob"},
	} {
		if got := principalOf(tc.p); got != tc.key {
			t.Errorf("%d: principalOf(%#v) = %q, want %q", i, tc.p, got, tc.key)
		}
		if got := ownerOf(tc.p); got != tc.owner {
			t.Errorf("%d: ownerOf(%#v) = %q, want %q", i, tc.p, got, tc.owner)
		}
	}
}
