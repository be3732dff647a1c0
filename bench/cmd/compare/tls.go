package main

// The HTTPS rows: mcpwire serve --tls-cert/--tls-key with a throwaway test
// CA and certificate (ECDSA P-256) made for the run, driven by wrk and by
// mcpwire load (--cacert) over keep-alive connections (a handshake per
// connection at the start, then records). Their ceiling is raw fasthttp
// behind fasthttp's own ListenAndServeTLS with the same certificate (the
// same run's TLS ceiling), and each is also reported next to its plain
// HTTP twin of the same round (what TLS costs).

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpwire/mcpwire/bench/internal/report"
	"github.com/mcpwire/mcpwire/internal/testcert"
)

// tlsRows are the HTTPS rows and their ceilings, at 64×1 and 1×1, under
// mcpwire load and (when there is wrk) under wrk. b names a binary of the
// build.
func tlsRows(cfg config, b func(string) string) []row {
	cert, key := filepath.Join(cfg.tlsDir, "cert.pem"), filepath.Join(cfg.tlsDir, "key.pem")
	gens := []generator{genLoad}
	if cfg.wrk != "" {
		gens = append(gens, genWrk)
	}
	var rows []row
	for _, v := range []struct {
		suffix string
		conns  int
	}{{"", 64}, {" 1×1", 1}} {
		for _, g := range gens {
			sfx := v.suffix
			if g == genWrk {
				sfx += " (wrk)"
			}
			rows = append(rows,
				row{name: "mcpwire HTTPS" + sfx, kind: kindHTTP, conns: v.conns, inflight: 1, gen: g,
					fixture: fixToken, tls: true, plain: "mcpwire HTTP" + sfx,
					server: []string{b("mcpwire"), "serve", "--http", "ADDR", "--log-level", "error", "--tls-cert", cert, "--tls-key", key}},
				row{name: "raw fasthttp TLS" + sfx, kind: kindHTTP, conns: v.conns, inflight: 1, gen: g,
					fixture: fixToken, tls: true, ceiling: true, plain: "raw fasthttp" + sfx,
					server: []string{b("rawfast"), "-addr", "ADDR", "-splice-id", "-tls-cert", cert, "-tls-key", key}})
		}
	}
	return rows
}

// tlsLoadArgs are mcpwire load's flags for a row: --cacert with the run's
// test CA on an HTTPS row.
func tlsLoadArgs(cfg config, r row) []string {
	if !r.tls {
		return nil
	}
	return []string{"-cacert", filepath.Join(cfg.tlsDir, "ca.pem")}
}

// writeTestCert writes ca.pem, cert.pem and key.pem (for 127.0.0.1) into dir.
func writeTestCert(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := testcert.NewCA("mcpwire compare test CA")
	if err != nil {
		return err
	}
	leaf, err := ca.Leaf("mcpwire compare", "127.0.0.1", "localhost")
	if err != nil {
		return err
	}
	if _, _, err := leaf.WriteFiles(dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ca.pem"), ca.PEM, 0o600)
}

// testCertClient trusts the CA writeTestCert made.
func testCertClient(dir string) (*tls.Config, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s/ca.pem: no certificate", dir)
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, nil
}

// tlsRatio is the median over rounds of an HTTPS row's req/s divided by
// its plain HTTP twin's in the same round (NaN without a pair).
func tlsRatio(rows []row, results [][]runResult, i int) (ratio float64, pairs int) {
	j := -1
	for k, r := range rows {
		if r.name == rows[i].plain {
			j = k
		}
	}
	if j < 0 {
		return nan, 0
	}
	var rs []float64
	for round := range results[i] {
		a, b := results[i][round], results[j][round]
		if a.err == nil && b.err == nil && a.load != nil && b.load != nil && b.load.RPS > 0 {
			rs = append(rs, a.load.RPS/b.load.RPS)
		}
	}
	return report.Median(rs), len(rs)
}

// tlsNotes prints each HTTPS row's ratio to its plain twin.
func tlsNotes(rows []row, results [][]runResult) {
	any := false
	for i, r := range rows {
		if r.plain == "" {
			continue
		}
		ratio, n := tlsRatio(rows, results, i)
		if n == 0 {
			continue
		}
		if !any {
			fmt.Println("HTTPS vs plain HTTP (req/s of each HTTPS row over its plain twin's in the same round; median over rounds):")
			any = true
		}
		fmt.Printf("  %-28s / %-26s %s  (%d rounds)\n", r.name, r.plain, report.FmtNum(ratio, 2), n)
	}
	if any {
		fmt.Println("  (TLS 1.3, ECDSA P-256 test certificate, keep-alive connections: one handshake per connection, then")
		fmt.Println("  encrypted records; wrk reads the decrypted bytes, so the bytes-per-request check holds as for plain HTTP.")
		fmt.Println("  The HTTPS rows' \"vs ceiling\" is against raw fasthttp TLS: fasthttp's own ListenAndServeTLS, same certificate.)")
		fmt.Println()
	}
}
