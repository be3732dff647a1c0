package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/mcpwire/mcpwire/state/redisstate"
)

// stateRedisFlags are a managed Redis's options (issue 22): the TLS files
// of a rediss:// or rediss-sentinel:// --state (a private CA, a client
// certificate), named --state-tls-* so that none reads like
// --state-key-file (the requestState signing keys), and the replicas a
// write must reach before it is acknowledged.
type stateRedisFlags struct {
	ca, cert, key string
	minReplicas   int // --state-min-replicas: redisstate.Config.MinReplicas
}

func (f *serveFlags) stateRedisFlagSet(fs *flag.FlagSet) {
	t := &f.stateRedis
	fs.StringVar(&t.ca, "state-tls-ca", "", "PEM file of the certificate authorities that sign the --state Redis's certificate (rediss:// or rediss-sentinel://; default: the system's roots)")
	fs.StringVar(&t.cert, "state-tls-cert", "", "PEM client certificate for a --state Redis that requires one (tls-auth-clients), with --state-tls-key")
	fs.StringVar(&t.key, "state-tls-key", "", "PEM key of --state-tls-cert")
	fs.IntVar(&t.minReplicas, "state-min-replicas", 0, fmt.Sprintf("acknowledge a write to the --state Redis only once this many replicas have it (WAIT, at most %v; else 503), so a failover cannot lose it; costs a round trip to the replicas per write, and every write while fewer replicas are up (default 0: no wait; a failover's possible losses answer 503 for a while)", redisstate.DefaultReplicaTimeout))
}

// stateMinReplicas is --state-min-replicas, checked.
func (f *serveFlags) stateMinReplicas() (int, error) {
	n := f.stateRedis.minReplicas
	switch {
	case n < 0:
		return 0, fmt.Errorf("serve: --state-min-replicas %d: want 0 or more", n)
	case n > 0 && !f.sharedState():
		return 0, errors.New("serve: --state-min-replicas needs a shared --state (redis://…)")
	}
	return n, nil
}

// stateTLSConfig builds redisstate.Config.TLS from --state-tls-*: nil
// without them. They need a --state with TLS.
func (f *serveFlags) stateTLSConfig() (*tls.Config, error) {
	t := f.stateRedis
	if t.ca == "" && t.cert == "" && t.key == "" {
		return nil, nil
	}
	if !strings.HasPrefix(f.state, "rediss://") && !strings.HasPrefix(f.state, "rediss-sentinel://") {
		return nil, errors.New("serve: --state-tls-ca, --state-tls-cert and --state-tls-key need a --state with TLS: rediss://HOST:PORT/DB or rediss-sentinel://…")
	}
	c, err := redisstate.LoadTLS(t.ca, t.cert, t.key)
	if err != nil {
		return nil, fmt.Errorf("serve: --state-tls-*: %w", err)
	}
	return c, nil
}
