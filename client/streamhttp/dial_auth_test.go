package streamhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// fakeAuth is an Authorizer that hands out "Bearer t<n>" after its n-th
// challenge (or fails with err).
type fakeAuth struct {
	mu     sync.Mutex
	n      int
	err    error
	seen   []string // "status www sent" per challenge
	header string
}

func (a *fakeAuth) Authorization(context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.header, nil
}

func (a *fakeAuth) Challenge(_ context.Context, status int, h http.Header, sent string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, fmt.Sprintf("%d %s|%s", status, h.Get("WWW-Authenticate"), sent))
	if a.err != nil {
		return a.err
	}
	a.n++
	a.header = fmt.Sprintf("Bearer t%d", a.n)
	return nil
}

// authServer answers 401 (with a Bearer challenge) to requests without
// "Authorization: Bearer <good>", 403 insufficient_scope to forbid, and
// dtOK1 (or 202 to a notification) otherwise, on one keep-alive
// connection. It records each request's Authorization header and target.
func authServer(t *testing.T, good, forbid string) (*dtServer, func() []string) {
	var mu sync.Mutex
	var log []string
	srv := newDTServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		for {
			r, err := dtRead(br)
			if err != nil {
				return
			}
			authz := r.hdr.Get("Authorization")
			mu.Lock()
			log = append(log, r.line+" "+authz)
			mu.Unlock()
			var resp string
			switch authz {
			case "Bearer " + good:
				if strings.Contains(r.body, `"method":"notifications/`) {
					resp = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
				} else {
					resp = dtJSON(200, dtOK1)
				}
			case "Bearer " + forbid:
				body := `{"error":"insufficient_scope"}`
				resp = fmt.Sprintf("HTTP/1.1 403 Forbidden\r\nWWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"b\"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			default:
				body := `invalid_token`
				resp = fmt.Sprintf("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer resource_metadata=\"http://x/.well-known/oauth-protected-resource\"\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			}
			if _, err := c.Write([]byte(resp)); err != nil {
				return
			}
		}
	})
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
}

func authOut(id string) *mcpclient.Outgoing {
	return &mcpclient.Outgoing{ID: []byte(id), Method: "tools/list", Version: "2026-07-28",
		Body: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}`)}
}

// TestDialAuthChallenge: a request refused with 401 goes to the
// Authorizer (the WWW-Authenticate fields joined, the Authorization it
// carried) and is sent again with the new Authorization header, on the
// same kept-alive connection; later requests carry it from the start;
// the token never travels in the request target.
func TestDialAuthChallenge(t *testing.T) {
	leakCheck(t)
	srv, log := authServer(t, "t1", "")
	auth := &fakeAuth{}
	tr := dtDial(t, srv.url, Config{Auth: auth})
	ctx := dtCtx(t)
	x, err := tr.Open(ctx, authOut("1"))
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := dtDrain(ctx, x); err != nil || len(msgs) != 1 || dtStatus(x) != 200 {
		t.Fatalf("messages %q, err %v, status %d", msgs, err, dtStatus(x))
	}
	if err := tr.Notify(ctx, &mcpclient.Outgoing{Method: "notifications/cancelled", Version: "2026-07-28",
		Body: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"POST /mcp HTTP/1.1 ", "POST /mcp HTTP/1.1 Bearer t1", "POST /mcp HTTP/1.1 Bearer t1"}
	if got := log(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(auth.seen) != 1 || auth.seen[0] != `401 Bearer resource_metadata="http://x/.well-known/oauth-protected-resource", Basic realm="x"|` {
		t.Fatalf("challenges %q", auth.seen)
	}
	if n := srv.n.Load(); n != 1 {
		t.Fatalf("%d connections, want 1 (the 401 reply kept the connection)", n)
	}
}

// TestDialAuthRetryLimit: a server that refuses every token: the request
// is sent again at most maxAuthRetries times, then the 401 comes back as
// a *client.StatusError.
func TestDialAuthRetryLimit(t *testing.T) {
	leakCheck(t)
	srv, log := authServer(t, "never", "")
	auth := &fakeAuth{}
	tr := dtDial(t, srv.url, Config{Auth: auth})
	ctx := dtCtx(t)
	x, err := tr.Open(ctx, authOut("1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dtDrain(ctx, x)
	var se *mcpclient.StatusError
	if !errors.As(err, &se) || se.Status != 401 {
		t.Fatalf("err %v, want a 401 StatusError", err)
	}
	if len(auth.seen) != maxAuthRetries || len(log()) != maxAuthRetries+1 {
		t.Fatalf("%d challenges, %d requests", len(auth.seen), len(log()))
	}
}

// TestDialAuthRefused: when the Authorizer gives up, Open fails with its
// reason and the reply's StatusError (403 insufficient_scope here).
func TestDialAuthRefused(t *testing.T) {
	leakCheck(t)
	srv, _ := authServer(t, "ok", "t0")
	why := errors.New("no way")
	auth := &fakeAuth{header: "Bearer t0", err: why}
	tr := dtDial(t, srv.url, Config{Auth: auth})
	ctx := dtCtx(t)
	_, err := tr.Open(ctx, authOut("1"))
	var se *mcpclient.StatusError
	if !errors.Is(err, why) || !errors.As(err, &se) || se.Status != 403 {
		t.Fatalf("err %v", err)
	}
	if len(auth.seen) != 1 || !strings.HasPrefix(auth.seen[0], `403 Bearer error="insufficient_scope", scope="b"|Bearer t0`) {
		t.Fatalf("challenges %q", auth.seen)
	}
	// Notify takes the same path.
	err = tr.Notify(ctx, &mcpclient.Outgoing{Method: "notifications/cancelled", Version: "2026-07-28", Body: []byte(`{}`)})
	if !errors.Is(err, why) || !errors.As(err, &se) || se.Status != 403 {
		t.Fatalf("Notify: %v", err)
	}
}

// TestDialAuthOptions: Auth and a static Authorization header exclude
// each other.
func TestDialAuthOptions(t *testing.T) {
	_, err := Dial("http://127.0.0.1:1/mcp", Config{Auth: &fakeAuth{}, Header: http.Header{"Authorization": {"Bearer x"}}})
	if err == nil {
		t.Fatal("Dial accepted Auth with a static Authorization header")
	}
}

// proofAuth hands out a DPoP token and numbered proofs.
type proofAuth struct {
	fakeAuth
	n atomic.Int64
}

func (a *proofAuth) Proof(method, url, authz string) (string, error) {
	return fmt.Sprintf("p%d %s %s %s", a.n.Add(1), method, url, authz), nil
}

// TestDialAuthDPoP: a DPoP-scheme Authorization travels with a DPoP
// header, a fresh proof for each request sent (the retry after a
// challenge too) for the method and the endpoint URL.
func TestDialAuthDPoP(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var proofs []string
	srv := newDTServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		for {
			r, err := dtRead(br)
			if err != nil {
				return
			}
			mu.Lock()
			proofs = append(proofs, r.hdr.Get("Dpop"))
			mu.Unlock()
			resp := dtJSON(200, dtOK1)
			if r.hdr.Get("Authorization") != "DPoP t1" {
				resp = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: DPoP error=\"use_dpop_nonce\"\r\nDPoP-Nonce: n1\r\nContent-Length: 0\r\n\r\n"
			}
			if _, err := c.Write([]byte(resp)); err != nil {
				return
			}
		}
	})
	auth := &proofAuth{fakeAuth: fakeAuth{header: "DPoP t0"}}
	tr := dtDial(t, srv.url+"?q=1", Config{Auth: &dpopScheme{auth}})
	ctx := dtCtx(t)
	for range 2 {
		x, err := tr.Open(ctx, authOut("1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dtDrain(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"p1 POST " + srv.url + " DPoP t0",
		"p2 POST " + srv.url + " DPoP t1",
		"p3 POST " + srv.url + " DPoP t1",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(proofs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("proofs:\n%s\nwant:\n%s", strings.Join(proofs, "\n"), strings.Join(want, "\n"))
	}
	if len(auth.seen) != 1 || auth.seen[0] != `401 DPoP error="use_dpop_nonce"|Bearer t0` {
		t.Fatalf("challenges %q", auth.seen)
	}
}

// dpopScheme makes fakeAuth's tokens DPoP ones ("DPoP t<n>").
type dpopScheme struct{ *proofAuth }

func (d *dpopScheme) Authorization(ctx context.Context) (string, error) {
	h, err := d.proofAuth.Authorization(ctx)
	return strings.Replace(h, "Bearer ", "DPoP ", 1), err
}

func (d *dpopScheme) Challenge(ctx context.Context, status int, h http.Header, sent string) error {
	if h.Get("DPoP-Nonce") != "n1" {
		return errors.New("no nonce")
	}
	return d.proofAuth.Challenge(ctx, status, h, strings.Replace(sent, "DPoP ", "Bearer ", 1))
}
