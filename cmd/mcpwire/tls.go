package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
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

// clientTLS is the TLS configuration of probe and call for --cacert: the
// CA certificates in the PEM file are trusted instead of the system roots.
func clientTLS(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// httpsClient is an http.Client with conf, for the OAuth requests.
func httpsClient(conf *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf, Proxy: http.ProxyFromEnvironment}}
}
