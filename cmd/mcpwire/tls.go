package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// serverTLS loads --tls-cert and --tls-key (nil, nil when neither is set)
// and reloads them when they change (checked at most every
// streamhttp.DefaultCertCheckInterval, on a handshake) and at once on
// SIGHUP (where there is one: not on Windows, see signal_other.go).
func serverTLS(ctx context.Context, certFile, keyFile string, log *slog.Logger) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("serve: --tls-cert and --tls-key go together")
	}
	cf, err := streamhttp.LoadCertFiles(certFile, keyFile, streamhttp.CertConfig{Logger: log})
	if err != nil {
		return nil, err
	}
	onHangup(ctx, func() {
		if err := cf.Reload(); err != nil {
			log.Warn("SIGHUP: TLS certificate not reloaded; the previous one is served", "err", err)
		} else {
			log.Info("SIGHUP: TLS certificate reloaded", "cert", certFile)
		}
	})
	return cf.TLSConfig(), nil
}

// clientTLS is the TLS configuration of probe, call and load for --cacert,
// --client-cert and --client-key (nil, nil when none is set): the CA
// certificates in caFile are trusted instead of the system roots, and the
// certificate chain and key (PEM) are sent when a server asks for a
// client certificate (mTLS).
func clientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		b, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", caFile)
		}
		conf.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return nil, errors.New("--client-cert and --client-key go together")
		}
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--client-cert %s, --client-key %s: %w", certFile, keyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// registerTLSFlags adds --cacert, --client-cert and --client-key to fs.
func registerTLSFlags(fs *flag.FlagSet, caFile, certFile, keyFile *string) {
	fs.StringVar(caFile, "cacert", "", "https targets: trust the CA certificates in this PEM file instead of the system roots")
	fs.StringVar(certFile, "client-cert", "", "https targets: send this PEM client certificate (chain) when the server asks for one (mTLS); with --client-key")
	fs.StringVar(keyFile, "client-key", "", "https targets: the PEM private key of --client-cert")
}

// httpsClient is an http.Client with conf, for the OAuth requests.
func httpsClient(conf *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf, Proxy: http.ProxyFromEnvironment}}
}
