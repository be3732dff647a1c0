package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/testcert"
)

// tlsSeen is what an HTTPS fake saw of its clients' TLS.
type tlsSeen struct {
	mu       sync.Mutex
	requests int
	resumed  int      // requests on connections that resumed a session
	peers    []string // client certificate common names, one per request that sent one
}

// startHTTPSFake is startHTTPFake over TLS: a certificate for 127.0.0.1
// from ca, clientAuth asked of the client (verified against ca), and the
// echo answered on every tools/call; close: Connection: close on every
// response (the client must open a new connection per request).
func startHTTPSFake(t *testing.T, ca *testcert.CA, clientAuth tls.ClientAuthType, close bool) (*httpFake, *tlsSeen) {
	t.Helper()
	leaf, err := ca.Leaf("load https fake", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLS()
	if err != nil {
		t.Fatal(err)
	}
	seen := &tlsSeen{}
	f := &httpFake{t: t, handle: func(w http.ResponseWriter, req *http.Request, m *rpcMsg) {
		seen.mu.Lock()
		seen.requests++
		if req.TLS != nil && req.TLS.DidResume {
			seen.resumed++
		}
		if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
			seen.peers = append(seen.peers, req.TLS.PeerCertificates[0].Subject.CommonName)
		}
		seen.mu.Unlock()
		if close {
			w.Header().Set("Connection", "close")
		}
		writeJSON(w, 200, resultJSON(m.ID, "hello world"))
	}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the tests' point
	f.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: clientAuth, ClientCAs: ca.Pool()}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f, seen
}

func newCA(t *testing.T, name string) *testcert.CA {
	t.Helper()
	ca, err := testcert.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestHTTPSLoopback: an https:// target is driven over TLS with the test
// CA trusted (the server name is the target's host, 127.0.0.1), on one
// connection and on several, every request answered and checked.
func TestHTTPSLoopback(t *testing.T) {
	ca := newCA(t, "load test CA")
	f, seen := startHTTPSFake(t, ca, tls.NoClientCert, false)
	url := f.url()
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("fake at %q", url)
	}
	for _, conns := range []int{1, 4} {
		res := runLoad(t, Config{Target: url, TLS: &tls.Config{RootCAs: ca.Pool()}, Conns: conns, Requests: 200})
		if res.Requests != 200 || len(res.Errors) != 0 {
			t.Errorf("%d connections: %d requests, errors %v", conns, res.Requests, res.Errors)
		}
	}
	if m := f.mismatches(); len(m) > 0 {
		t.Errorf("header mismatches: %v", m)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.requests < 400 {
		t.Errorf("the server saw %d requests over TLS, want at least 400", seen.requests)
	}
}

// TestHTTPSWrongCA: a server whose certificate the client does not trust
// is refused before any request, with an error that says so (and no
// warning about the tools/list that could not be sent before it) —
// whether another CA is trusted (--cacert) or the system roots are.
func TestHTTPSWrongCA(t *testing.T) {
	f, seen := startHTTPSFake(t, newCA(t, "server CA"), tls.NoClientCert, false)
	other := newCA(t, "another CA")
	for _, conf := range []*tls.Config{{RootCAs: other.Pool()}, nil} {
		var logBuf syncBuffer
		_, err := Run(context.Background(), Config{Target: f.url(), TLS: conf, Conns: 2, Requests: 10, Timeout: 10 * time.Second, Log: &logBuf})
		if err == nil {
			t.Fatal("a server signed by an untrusted CA was accepted")
		}
		if logBuf.String() != "" {
			t.Errorf("a warning before the error: %s", logBuf.String())
		}
		if _, ok := errors.AsType[x509.UnknownAuthorityError](err); !ok || !strings.Contains(err.Error(), "TLS handshake with 127.0.0.1:") ||
			!strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Errorf("err = %v, want a TLS handshake error naming the unknown authority", err)
		}
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.requests != 0 {
		t.Errorf("%d requests reached the server", seen.requests)
	}
}

// TestHTTPSClientCert: a server that requires a client certificate gets
// the configured one on every connection; without one the run fails.
func TestHTTPSClientCert(t *testing.T) {
	ca := newCA(t, "mtls CA")
	f, seen := startHTTPSFake(t, ca, tls.RequireAndVerifyClientCert, false)
	cl, err := ca.ClientLeaf("load client")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := cl.TLS()
	if err != nil {
		t.Fatal(err)
	}
	res := runLoad(t, Config{Target: f.url(), TLS: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}},
		Conns: 2, Requests: 50})
	if res.Requests != 50 || len(res.Errors) != 0 {
		t.Errorf("%d requests, errors %v", res.Requests, res.Errors)
	}
	seen.mu.Lock()
	peers := append([]string(nil), seen.peers...)
	n := seen.requests
	seen.mu.Unlock()
	if len(peers) != n || n < 50 {
		t.Errorf("%d of %d requests came with a client certificate", len(peers), n)
	}
	for _, p := range peers {
		if p != "load client" {
			t.Fatalf("client certificate %q", p)
		}
	}
	// Without it: in TLS 1.3 the client learns of the refusal at its
	// first read, so the run fails either at setup or request by request.
	res, err = Run(context.Background(), Config{Target: f.url(), TLS: &tls.Config{RootCAs: ca.Pool()}, Conns: 1, Requests: 5, Timeout: 10 * time.Second})
	if err == nil && res.Check(DefaultMaxErrorShare) == nil {
		t.Errorf("a run without the client certificate the server requires succeeded: %d requests, errors %v", res.Requests, res.Errors)
	}
}

// TestHTTPSResumption: connections the server closes are opened again
// with the TLS session resumed (the connections share a session cache),
// as a real client's would be: no full handshake per reconnect.
func TestHTTPSResumption(t *testing.T) {
	ca := newCA(t, "resumption CA")
	f, seen := startHTTPSFake(t, ca, tls.NoClientCert, true)
	res := runLoad(t, Config{Target: f.url(), TLS: &tls.Config{RootCAs: ca.Pool()}, Conns: 1, Requests: 20})
	if res.Requests != 20 || len(res.Errors) != 0 {
		t.Errorf("%d requests, errors %v", res.Requests, res.Errors)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	// The preflight's and the first connection's handshakes are full;
	// every later one can resume.
	if seen.resumed < seen.requests-3 {
		t.Errorf("%d of %d connections resumed a TLS session", seen.resumed, seen.requests)
	}
}
