package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/mcpwire/mcpwire/state/redisstate"
)

// stateTLSFlags are the TLS files of a managed Redis (issue 22): a
// private CA and a client certificate for a rediss:// or
// rediss-sentinel:// --state. Named --state-tls-* so that none reads like
// --state-key-file, the requestState signing keys.
type stateTLSFlags struct {
	ca, cert, key string
}

func (f *serveFlags) stateTLSFlagSet(fs *flag.FlagSet) {
	t := &f.stateTLS
	fs.StringVar(&t.ca, "state-tls-ca", "", "PEM file of the certificate authorities that sign the --state Redis's certificate (rediss:// or rediss-sentinel://; default: the system's roots)")
	fs.StringVar(&t.cert, "state-tls-cert", "", "PEM client certificate for a --state Redis that requires one (tls-auth-clients), with --state-tls-key")
	fs.StringVar(&t.key, "state-tls-key", "", "PEM key of --state-tls-cert")
}

// stateTLSConfig builds redisstate.Config.TLS from --state-tls-*: nil
// without them. They need a --state with TLS.
func (f *serveFlags) stateTLSConfig() (*tls.Config, error) {
	t := f.stateTLS
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
