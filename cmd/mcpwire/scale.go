package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strings"

	"github.com/mcpwire/mcpwire/state"
)

// Scale-out flags of serve (issue 11):
//
//	--state memory | redis://HOST:PORT/DB   where drafts and change cues live
//	--state-key-file FILE                    requestState keys, one a line (or MCPWIRE_STATE_KEYS)
//	--trusted-proxy CIDR                     a balancer sending the PROXY protocol (repeatable)
//	--insecure-test-auth                     tests only: the bearer token is the principal

// stateKeysEnv holds the requestState keys when --state-key-file is not
// given: comma-separated, each in the key file's encoding.
const stateKeysEnv = "MCPWIRE_STATE_KEYS"

// minStateKey is the shortest key accepted (refserver's own minimum).
const minStateKey = 16

// loadStateKeys returns the fleet's requestState keys from file (one key a
// line; blank lines and lines starting with # are skipped) or, without a
// file, from MCPWIRE_STATE_KEYS (comma-separated). A key is hex (at least
// 32 digits), or base64 after a "base64:" prefix; at least 16 bytes. The
// first key signs, every key verifies: rotate by deploying "new, old",
// then "new" once old states have expired (10 minutes). No file and no
// variable: nil (a random key per process; replicas then refuse each
// other's states).
func loadStateKeys(file string, getenv func(string) string) ([][]byte, error) {
	var items []string
	switch {
	case file != "":
		fi, err := os.Stat(file)
		if err != nil {
			return nil, fmt.Errorf("--state-key-file: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			slog.Warn("state key file is readable by group or others", "file", file, "mode", fi.Mode().Perm().String())
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--state-key-file: %w", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !strings.HasPrefix(l, "#") {
				items = append(items, l)
			}
		}
		if len(items) == 0 {
			return nil, fmt.Errorf("--state-key-file %s: no keys", file)
		}
	case getenv(stateKeysEnv) != "":
		for _, p := range strings.Split(getenv(stateKeysEnv), ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
	default:
		return nil, nil
	}
	keys := make([][]byte, 0, len(items))
	for i, it := range items {
		var k []byte
		var err error
		if rest, ok := strings.CutPrefix(it, "base64:"); ok {
			k, err = base64.StdEncoding.DecodeString(rest)
			if err != nil {
				k, err = base64.RawURLEncoding.DecodeString(rest)
			}
		} else {
			k, err = hex.DecodeString(it)
		}
		if err != nil {
			return nil, fmt.Errorf("state key %d: not hex (or base64: with the prefix)", i+1)
		}
		if len(k) < minStateKey {
			return nil, fmt.Errorf("state key %d: %d bytes, want at least %d", i+1, len(k), minStateKey)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

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
