package streamhttp

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCertCheckInterval is how often CertFiles looks at its files by
// default.
const DefaultCertCheckInterval = 10 * time.Second

// CertConfig configures CertFiles.
type CertConfig struct {
	// CheckInterval is how often, at most, a handshake looks whether the
	// files changed (two stat calls; no goroutine, no timer). Default
	// 10 s; negative: never (Reload only).
	CheckInterval time.Duration
	// Logger receives a warning when changed files cannot be loaded; nil
	// discards it.
	Logger *slog.Logger
}

// CertFiles serves a certificate chain and key from two PEM files and
// picks up new ones without a restart. Renewal tools (certbot, a
// Kubernetes secret volume's symlink swap, cert-manager) replace the files:
// the first handshake after CheckInterval that finds either file changed
// (modification time, size or the file itself) loads the pair again, and
// new connections get the new certificate while open connections keep the
// one they negotiated. Reload does the same at once, for a SIGHUP handler
// (mcpwire serve installs one). A pair that does not load — a
// certificate written but not yet its key, a typo — is logged and the
// previous certificate is kept; the next check tries again.
//
// Its methods are safe for concurrent use.
type CertFiles struct {
	certFile, keyFile string
	every             time.Duration
	log               *slog.Logger

	cert     atomic.Pointer[tls.Certificate]
	nextScan atomic.Int64 // Unix ns before which no handshake looks at the files

	mu             sync.Mutex // one load at a time; guards the stamps
	certSt, keySt  os.FileInfo
	reloads, fails atomic.Uint64
}

// LoadCertFiles loads the pair once (an error if it does not load) and
// returns a CertFiles serving it.
func LoadCertFiles(certFile, keyFile string, cfg CertConfig) (*CertFiles, error) {
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = DefaultCertCheckInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &CertFiles{certFile: certFile, keyFile: keyFile, every: cfg.CheckInterval, log: cfg.Logger}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	c.reloads.Store(0) // the first load is no reload
	c.nextScan.Store(time.Now().Add(c.every).UnixNano())
	return c, nil
}

// GetCertificate is a tls.Config.GetCertificate hook serving the current
// certificate.
func (c *CertFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c.every > 0 {
		now := time.Now().UnixNano()
		if next := c.nextScan.Load(); now >= next && c.nextScan.CompareAndSwap(next, now+int64(c.every)) {
			c.reloadIfChanged()
		}
	}
	return c.cert.Load(), nil
}

// TLSConfig returns a tls.Config serving these files, for Config.TLS.
func (c *CertFiles) TLSConfig() *tls.Config {
	return &tls.Config{GetCertificate: c.GetCertificate, MinVersion: tls.VersionTLS12}
}

// Reload loads the pair now. On error the previous certificate stays.
func (c *CertFiles) Reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, err1 := os.Stat(c.certFile)
	ks, err2 := os.Stat(c.keyFile)
	return c.load(cs, ks, firstErr(err1, err2))
}

// Reloads counts the certificates loaded after the first; Failures the
// loads that failed (the previous certificate was kept).
func (c *CertFiles) Reloads() uint64  { return c.reloads.Load() }
func (c *CertFiles) Failures() uint64 { return c.fails.Load() }

func (c *CertFiles) reloadIfChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, err1 := os.Stat(c.certFile)
	ks, err2 := os.Stat(c.keyFile)
	if err := firstErr(err1, err2); err == nil && same(c.certSt, cs) && same(c.keySt, ks) {
		return
	}
	if err := c.load(cs, ks, firstErr(err1, err2)); err != nil {
		c.log.Warn("streamhttp: TLS certificate not reloaded; the previous one is served", "err", err)
	}
}

// load reads the pair; called with mu held. statErr is the stat calls'.
func (c *CertFiles) load(cs, ks os.FileInfo, statErr error) error {
	if statErr == nil {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err == nil {
			c.cert.Store(&cert)
			c.certSt, c.keySt = cs, ks
			c.reloads.Add(1)
			return nil
		}
		statErr = err
	}
	c.fails.Add(1)
	return fmt.Errorf("streamhttp: TLS certificate %s, key %s: %w", c.certFile, c.keyFile, statErr)
}

func same(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
