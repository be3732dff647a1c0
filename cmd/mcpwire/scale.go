package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/mcpwire/mcpwire/state"
)

// Scale-out flags of serve (issue 11):
//
//	--state memory | redis://HOST:PORT/DB   where drafts and change cues live
//	--state-key-file FILE                    requestState keys, one a line (or MCPWIRE_STATE_KEYS; mrtr.LoadKeys)
//	--trusted-proxy CIDR                     a balancer sending the PROXY protocol (repeatable)
//	--insecure-test-auth                     tests only: the bearer token is the principal

// prefixList is a repeatable CIDR flag (a bare address is its /32 or /128).
type prefixList []netip.Prefix

func (p *prefixList) String() string {
	var s []string
	for _, x := range *p {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}

func (p *prefixList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		pr, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return fmt.Errorf("not a CIDR or address: %q", f)
			}
			pr = netip.PrefixFrom(a, a.BitLen())
		}
		*p = append(*p, pr.Masked())
	}
	return nil
}

// sharedState is what --state opened: nil Store and Backplane mean "in
// this process only".
type sharedState struct {
	Store     state.Store
	Backplane state.Backplane
	close     []func() error
}

// Close releases what openState opened, after the engine has shut down.
func (s *sharedState) Close() error {
	var errs []error
	for _, c := range s.close {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// testPrincipal is the --insecure-test-auth authenticator: the bearer
// token names the principal, unverified. For tests of principal isolation
// only; never for a deployment.
func testPrincipal(_ context.Context, token string) (any, error) {
	if token == "" {
		return nil, nil
	}
	return "test:" + token, nil
}
