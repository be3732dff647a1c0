package redistest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mcpwire/mcpwire/internal/testcert"
)

// TLS is what a client of a StartTLS server needs: its TLS port on
// 127.0.0.1 and PEM files of the CA that signed the server's certificate
// and of a client certificate and key that CA signed.
type TLS struct {
	Port              int
	CAFile, Cert, Key string
}

// URL is the TLS port as a rediss:// URL (database 0).
func (t TLS) URL() string { return "rediss://127.0.0.1:" + strconv.Itoa(t.Port) + "/0" }

// StartTLS starts a redis-server that also serves TLS on a second port,
// requiring client certificates from a fresh CA (tls-auth-clients), with
// more arguments args (a requirepass …).
func StartTLS(tb testing.TB, args ...string) (*Server, TLS) {
	tb.Helper()
	binary(tb) // skip before making certificates
	dir := tb.TempDir()
	ca, err := testcert.NewCA("redis test CA")
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := ca.Leaf("redis")
	if err != nil {
		tb.Fatal(err)
	}
	cli, err := ca.ClientLeaf("mcpwire")
	if err != nil {
		tb.Fatal(err)
	}
	sdir, cdir := filepath.Join(dir, "server"), filepath.Join(dir, "client")
	for _, d := range []string{sdir, cdir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	srvCert, srvKey, err := srv.WriteFiles(sdir)
	if err != nil {
		tb.Fatal(err)
	}
	t := TLS{Port: FreePort(tb), CAFile: filepath.Join(dir, "ca.pem")}
	if t.Cert, t.Key, err = cli.WriteFiles(cdir); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(t.CAFile, ca.PEM, 0o600); err != nil {
		tb.Fatal(err)
	}
	s := StartArgs(tb, append([]string{"--tls-port", strconv.Itoa(t.Port), "--tls-cert-file", srvCert, "--tls-key-file", srvKey,
		"--tls-ca-cert-file", t.CAFile, "--tls-auth-clients", "yes"}, args...)...)
	return s, t
}
