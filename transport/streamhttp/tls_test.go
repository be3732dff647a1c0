package streamhttp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/mcpwire/mcpwire/internal/fixture"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
	httpclient "github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/testcert"
)

// tlsFixture is a test CA and a certificate for the loopback names.
type tlsFixture struct {
	ca   *testcert.CA
	leaf *testcert.Leaf
	cert tls.Certificate
}

func newTLSFixture(t testing.TB) *tlsFixture {
	t.Helper()
	ca, err := testcert.NewCA("mcpwire test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Leaf("mcpwire test server")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return &tlsFixture{ca: ca, leaf: leaf, cert: cert}
}

// httpsClient is a net/http client trusting the fixture's CA that offers
// h2 and http/1.1 (ALPN), one connection per request.
func (f *tlsFixture) httpsClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: f.ca.Pool()},
		ForceAttemptHTTP2: true,
		DisableKeepAlives: true,
	}}
}

// postEcho sends EXAMPLES-style tools/call echo to url with c.
func postEcho(t *testing.T, c *http.Client, url, text string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(fixture.ToolsCall("1", "echo", `{"text":"`+text+`"}`)))
	for _, l := range mcpHdr("tools/call", "Mcp-Name: echo") {
		k, v, _ := strings.Cut(l, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestTLSServe: both front ends speak HTTPS with Config.TLS to Go's TLS
// client (net/http, verifying the chain against a test CA), negotiate
// http/1.1 when h2 is offered too, and default the Origin allow-list to
// their own https origins (SEC-02).
func TestTLSServe(t *testing.T) {
	f := newTLSFixture(t)
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}, NextProtos: []string{"h2"}}}, defaultOptions())
		url := "https://" + h.addr + "/mcp"
		resp, body := postEcho(t, f.httpsClient(), url, "over tls")
		if resp.StatusCode != 200 || !strings.Contains(body, `"text":"over tls"`) {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if resp.TLS == nil || resp.TLS.NegotiatedProtocol != "http/1.1" || resp.ProtoMajor != 1 {
			t.Fatalf("TLS %+v, proto %s: want ALPN http/1.1", resp.TLS, resp.Proto)
		}

		// A client that does not trust the CA fails its handshake, and
		// the server counts it.
		bad := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		if _, err := bad.Post(url, "application/json", strings.NewReader("{}")); err == nil {
			t.Fatal("an unverified certificate was accepted")
		}
		waitCounter(t, &h.srv.Stats().TLSHandshakeErrors, 1)

		// The default Origin allow-list is the server's own https origins.
		c := h.dialTLS(t, f)
		r, b := c.roundTrip(h, request{hdr: append(ex2Hdr(), "Origin: https://localhost:{port}"), body: fixture.Ex2Body})
		if r.StatusCode != 200 {
			t.Fatalf("own https origin: %d %s", r.StatusCode, b)
		}
		r, _ = c.roundTrip(h, request{hdr: append(ex2Hdr(), "Origin: http://localhost:{port}"), body: fixture.Ex2Body})
		if r.StatusCode != 403 {
			t.Fatalf("http origin on an https server: %d, want 403", r.StatusCode)
		}
	})
}

// TestTLSPlainClient: plain HTTP sent to a TLS listener is answered with a
// plain 400 saying the server speaks HTTPS, the connection is closed and
// the request never reaches a handler.
func TestTLSPlainClient(t *testing.T) {
	f := newTLSFixture(t)
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}}, defaultOptions())
		c := h.dial(t)
		resp, body := c.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		if resp.StatusCode != 400 || !strings.Contains(string(body), "HTTPS") {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
		if !c.closedByServer(5 * time.Second) {
			t.Fatal("connection left open")
		}
		if n := h.fx.SQLRuns.Load(); n != 0 {
			t.Fatalf("handler ran %d times", n)
		}
		if n := h.srv.Stats().PlainOnTLS.Load(); n != 1 {
			t.Fatalf("PlainOnTLS = %d", n)
		}
		// Through net/http's client too: an error status, not a hang.
		resp2, _ := postEcho(t, &http.Client{Timeout: 5 * time.Second}, "http://"+h.addr+"/mcp", "x")
		if resp2.StatusCode != 400 {
			t.Fatalf("net/http plain client: %d", resp2.StatusCode)
		}
	})
}

// TestTLSCertReload: CertFiles serves the certificate on disk; once the
// files are replaced, new connections get the new certificate without a
// restart, while a pair that does not load keeps the old one.
func TestTLSCertReload(t *testing.T) {
	f := newTLSFixture(t)
	dir := t.TempDir()
	certFile, keyFile, err := f.leaf.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := LoadCertFiles(certFile, keyFile, CertConfig{CheckInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		if _, _, err := f.leaf.WriteFiles(dir); err != nil {
			t.Fatal(err)
		}
		if err := cf.Reload(); err != nil {
			t.Fatal(err)
		}
		h := startHarness(t, fe, Config{TLS: cf.TLSConfig()}, defaultOptions())
		serial := func() string {
			t.Helper()
			resp, body := postEcho(t, f.httpsClient(), "https://"+h.addr+"/mcp", "x")
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			return resp.TLS.PeerCertificates[0].SerialNumber.String()
		}
		if got := serial(); got != f.leaf.Serial.String() {
			t.Fatalf("serial %s, want the first certificate's %s", got, f.leaf.Serial)
		}
		// Keep one connection open across the reload.
		old := h.dialTLS(t, f)
		if r, b := old.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); r.StatusCode != 200 {
			t.Fatalf("%d %s", r.StatusCode, b)
		}

		next, err := f.ca.Leaf("mcpwire test server, renewed")
		if err != nil {
			t.Fatal(err)
		}
		// A certificate without its key first: not loadable, the old
		// certificate stays.
		fails := cf.Failures()
		if err := os.WriteFile(certFile, next.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		if got := serial(); got != f.leaf.Serial.String() {
			t.Fatalf("half-written pair: serial %s, want the old %s", got, f.leaf.Serial)
		}
		if cf.Failures() == fails {
			t.Fatal("the mismatched pair was not noticed")
		}
		if err := os.WriteFile(keyFile, next.KeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for serial() != next.Serial.String() {
			if time.Now().After(deadline) {
				t.Fatal("the renewed certificate was never served")
			}
			time.Sleep(30 * time.Millisecond)
		}
		// The connection opened before the reload still works.
		if r, b := old.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); r.StatusCode != 200 {
			t.Fatalf("old connection after reload: %d %s", r.StatusCode, b)
		}
	})
}

// TestTLSDisconnectCancels: closing a TLS connection while its request
// runs cancels the handler (HCAN-01, C6) on both front ends, although the
// client's close_notify alert arrives before its FIN (the fasthttp front
// end's watcher must not take it for a pipelined request).
func TestTLSDisconnectCancels(t *testing.T) {
	f := newTLSFixture(t)
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}}, defaultOptions())
		c := h.dialTLS(t, f)
		c.write(h.raw(request{hdr: mcpHdr("tools/call", "Mcp-Name: block"), body: fixture.ToolsCall("5", "block", "{}")}))
		if !waitFor(t, h.fx.Started, "block", 5*time.Second) {
			t.Fatal("handler did not start")
		}
		time.Sleep(2 * watchDelay) // the watch is armed
		if err := c.conn.Close(); err != nil {
			t.Fatal(err)
		}
		if !waitFor(t, h.fx.Cancelled, "block", 5*time.Second) {
			t.Fatal("closing the TLS connection did not cancel the handler")
		}
	})
}

// TestTLSFramingAndLimits: over TLS, a request with both Content-Length
// and Transfer-Encoding is still refused with 400 and the connection
// closed (B5: the net/http adapter's scan reads the decrypted bytes), and
// the per-IP connection limit still answers 429 before any handshake (C11).
func TestTLSFramingAndLimits(t *testing.T) {
	f := newTLSFixture(t)
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}, MaxConnsPerIP: 2}, defaultOptions())
		small := fixture.ToolsCall("21", "echo", `{"text":"x"}`)
		c := h.dialTLS(t, f)
		c.write([]byte(hdrLines(h) + fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", 5, len(small), small) +
			string(h.raw(request{hdr: ex2Hdr(), body: fixture.Ex2Body}))))
		resp, err := c.readResponse(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 || !c.closedByServer(5*time.Second) {
			t.Fatalf("both framings over TLS: %d, want 400 and close", resp.StatusCode)
		}
		if n := h.srv.Stats().BadFraming.Load(); n != 1 {
			t.Fatalf("BadFraming = %d", n)
		}
		if n := h.fx.SQLRuns.Load(); n != 0 {
			t.Fatalf("the smuggled request ran (%d)", n)
		}

		// Two TLS connections held open; the third is refused in plain
		// HTTP at accept time, before any handshake.
		a, b := h.dialTLS(t, f), h.dialTLS(t, f)
		for _, cl := range []*client{a, b} {
			if r, body := cl.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); r.StatusCode != 200 {
				t.Fatalf("%d %s", r.StatusCode, body)
			}
		}
		third := h.dial(t)
		r, err := third.readResponse(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 429 {
			t.Fatalf("third connection: %d, want 429", r.StatusCode)
		}
	})
}

// TestServerTLSConfig: the served copy of Config.TLS offers http/1.1
// first, drops h2, keeps other protocols, defaults MinVersion to TLS 1.2
// and leaves the caller's config alone.
func TestServerTLSConfig(t *testing.T) {
	f := newTLSFixture(t)
	in := &tls.Config{Certificates: []tls.Certificate{f.cert}, NextProtos: []string{"h2", "acme-tls/1", "http/1.1"}}
	got, err := serverTLS(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.NextProtos, ",") != "http/1.1,acme-tls/1" || got.MinVersion != tls.VersionTLS12 {
		t.Fatalf("NextProtos %q, MinVersion %x", got.NextProtos, got.MinVersion)
	}
	if strings.Join(in.NextProtos, ",") != "h2,acme-tls/1,http/1.1" || in.MinVersion != 0 {
		t.Fatal("the caller's config was changed")
	}
	if got, _ := serverTLS(&tls.Config{Certificates: in.Certificates, MinVersion: tls.VersionTLS13}); got.MinVersion != tls.VersionTLS13 {
		t.Fatalf("MinVersion %x", got.MinVersion)
	}
	if _, err := serverTLS(&tls.Config{}); !errors.Is(err, errNoCertificate) {
		t.Fatalf("no certificate: %v", err)
	}
}

// TestTLSPlaintextRule: a non-loopback listener needs TLS or an explicit
// InsecurePlaintext (SEC-04: remote servers are reached over HTTPS), and
// plain HTTP on one is logged as a warning. Serve runs on a loopback
// socket that reports a public address, so nothing listens beyond
// loopback.
func TestTLSPlaintextRule(t *testing.T) {
	leakCheck(t)
	eng := engine.New(defaultOptions())
	defer eng.Shutdown(context.Background())
	// Listen refuses before binding anything.
	if _, err := New(eng, Config{AllowNonLoopback: true}).Listen("0.0.0.0:0"); !errors.Is(err, ErrPlaintext) {
		t.Fatalf("plain non-loopback Listen: %v, want ErrPlaintext", err)
	}
	if _, err := New(eng, Config{}).Listen("0.0.0.0:0"); !errors.Is(err, ErrNonLoopback) {
		t.Fatalf("Listen without AllowNonLoopback: %v", err)
	}
	public := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return publicAddr{ln}
	}
	if err := New(eng, Config{AllowNonLoopback: true}).Serve(public()); !errors.Is(err, ErrPlaintext) {
		t.Fatalf("plain non-loopback Serve: %v, want ErrPlaintext", err)
	}
	if err := New(eng, Config{}).Serve(public()); !errors.Is(err, ErrNonLoopback) {
		t.Fatalf("Serve without AllowNonLoopback: %v", err)
	}
	f := newTLSFixture(t)
	for _, tc := range []struct {
		cfg  Config
		warn bool
	}{
		{Config{AllowNonLoopback: true, InsecurePlaintext: true}, true},
		{Config{AllowNonLoopback: true, TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}}, false},
	} {
		var logs strings.Builder
		var mu sync.Mutex
		tc.cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
		s := New(eng, tc.cfg)
		done := make(chan error, 1)
		go func() { done <- s.Serve(public()) }()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			s.mu.Lock()
			up := s.fast != nil
			s.mu.Unlock()
			if up {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("TLS %v, InsecurePlaintext %v: %v", tc.cfg.TLS != nil, tc.cfg.InsecurePlaintext, err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("Serve did not start")
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Shutdown(ctx)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "plain HTTP")
		mu.Unlock()
		if warned != tc.warn {
			t.Fatalf("TLS %v: warning logged %v, want %v: %s", tc.cfg.TLS != nil, warned, tc.warn, logs.String())
		}
	}
	// A TLS config without a certificate is refused at Serve.
	if err := New(eng, Config{TLS: &tls.Config{}}).Serve(public()); !errors.Is(err, errNoCertificate) {
		t.Fatalf("TLS without a certificate: %v", err)
	}
}

// publicAddr is a listener that reports a public address.
type publicAddr struct{ net.Listener }

func (publicAddr) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8443} }

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestTLSDialClient: our client (Dial, client.Client) over TLS on
// loopback: a call, a call whose reply is SSE (progress), and a listen
// stream (on the fasthttp front end its connection is hijacked, and the
// stream is written through TLS).
func TestTLSDialClient(t *testing.T) {
	f := newTLSFixture(t)
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}}, defaultOptions())
		tr, err := httpclient.Dial("https://localhost:"+strconv.Itoa(h.port)+"/mcp", httpclient.Config{TLSConfig: &tls.Config{RootCAs: f.ca.Pool()}})
		if err != nil {
			t.Fatal(err)
		}
		c := mcpclient.New(tr, mcpclient.Config{})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"}, nil)
		if err != nil || res.Text() != "hi" {
			t.Fatalf("%v %+v", err, res)
		}
		var progress int
		res, err = c.CallTool(ctx, "execute_sql", map[string]any{"region": "us-west1", "query": "SELECT 1"},
			&mcpclient.CallOptions{OnProgress: func(mcpclient.Progress) { progress++ }})
		if err != nil || res.Text() != "1000 rows" || progress != 2 {
			t.Fatalf("progress %d, %v %+v", progress, err, res)
		}
		sub, err := c.Listen(ctx, mcpclient.Filter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		h.eng.ToolsChanged()
		for got := false; !got; {
			select {
			case e := <-sub.Events():
				got = e.Kind == mcpclient.EventNotification && e.Method == "notifications/tools/list_changed"
			case <-ctx.Done():
				t.Fatal("no event on the TLS listen stream")
			}
		}
		sub.Close()
	})
}

// TestTLSCurl: curl (OpenSSL or whichever TLS library it is built with),
// offering h2 where it can, gets an http/1.1 answer over TLS.
func TestTLSCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	f := newTLSFixture(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, f.ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}}, defaultOptions())
		args := []string{"-sS", "--max-time", "10", "--cacert", caFile, "-w", "\n%{http_code} %{http_version}", "-X", "POST"}
		for _, l := range mcpHdr("tools/call", "Mcp-Name: echo") {
			args = append(args, "-H", l)
		}
		args = append(args, "--data-binary", fixture.ToolsCall("1", "echo", `{"text":"curl"}`), "https://localhost:"+strconv.Itoa(h.port)+"/mcp")
		out, err := exec.Command(curl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v: %s", err, out)
		}
		if !strings.Contains(string(out), `"text":"curl"`) || !strings.HasSuffix(string(out), "\n200 1.1") {
			t.Fatalf("curl: %s", out)
		}
	})
}

// dialTLS is dial over TLS, trusting the fixture's CA.
func (h *harness) dialTLS(t *testing.T, f *tlsFixture) *client {
	t.Helper()
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{RootCAs: f.ca.Pool(), ServerName: "localhost"}}
	conn, err := d.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, br: bufio.NewReaderSize(conn, 64<<10)}
}

func waitCounter(t *testing.T, c interface{ Load() uint64 }, want uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("counter %d, want %d", c.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTLSConnHooks: over TLS, every connection reported to ConnStart is
// reported to ConnEnd once it closes, on both front ends (the net/http
// adapter's TLS close once released the slot without ending the
// connection for the hooks).
func TestTLSConnHooks(t *testing.T) {
	f := newTLSFixture(t)
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		l := &hookLog{conns: map[*engine.ConnInfo]string{}, outcomes: map[string]engine.Outcome{}, ended: make(chan struct{}, 64)}
		opt := defaultOptions()
		opt.Hooks = l.hooks()
		h := startHarness(t, fe, Config{TLS: &tls.Config{Certificates: []tls.Certificate{f.cert}}}, opt)
		c := f.httpsClient()
		if resp, body := postEcho(t, c, "https://"+h.addr+"/mcp", "hooks"); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		c.CloseIdleConnections()
		if err := h.shutdown(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.conns) == 0 {
			t.Fatal("no connection reported")
		}
		for _, st := range l.conns {
			if st != "closed http" {
				t.Errorf("connection state %q after shutdown", st)
			}
		}
	})
}
