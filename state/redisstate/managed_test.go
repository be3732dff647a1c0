package redisstate

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/internal/testcert"
	"github.com/mcpwire/mcpwire/state"
)

// Managed Redis (issue 22 item 2): TLS with a private CA and a client
// certificate, an ACL user, Sentinel URLs.

// tlsRedis starts a redis-server with a TLS port that requires client
// certificates signed by a fresh CA, and returns that port and the files
// (CA, client certificate, client key) a client needs.
func tlsRedis(t *testing.T) (port int, caFile, certFile, keyFile string) {
	_, tl := redistest.StartTLS(t)
	return tl.Port, tl.CAFile, tl.Cert, tl.Key
}

func TestRedisTLSClientCertificate(t *testing.T) {
	port, caFile, certFile, keyFile := tlsRedis(t)
	url := "rediss://127.0.0.1:" + strconv.Itoa(port) + "/0"
	ctx := context.Background()
	tc, err := LoadTLS(caFile, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, url, Config{TLS: tc})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Create(ctx, "p", []byte("over TLS"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.Get(ctx, "p", h); err != nil || string(r.Value) != "over TLS" {
		t.Fatalf("Get = %q, %v", r.Value, err)
	}

	// Without the client certificate the server refuses the handshake.
	noCert, err := LoadTLS(caFile, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := New(ctx, url, Config{TLS: noCert, DialTimeout: 2 * time.Second}); err == nil {
		s.Close()
		t.Fatal("New without the client certificate Redis requires succeeded")
	} else if !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("New without a client certificate: %v, want unavailable", err)
	}
}

// A server certificate from another CA fails New with the verification
// error named, not a hang nor a plain-text attempt.
func TestRedisTLSWrongCA(t *testing.T) {
	port, _, certFile, keyFile := tlsRedis(t)
	other, err := testcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	otherFile := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(otherFile, other.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	tc, err := LoadTLS(otherFile, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), "rediss://127.0.0.1:"+strconv.Itoa(port)+"/0", Config{TLS: tc})
	if err == nil {
		s.Close()
		t.Fatal("New trusted a certificate from an unknown CA")
	}
	if !errors.Is(err, state.ErrUnavailable) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("New with the wrong CA: %v; want unavailable naming the certificate", err)
	}
}

func TestLoadTLSErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ca, cert, key, want string }{
		{notPEM, "", "", "no PEM certificate"},
		{filepath.Join(dir, "missing.pem"), "", "", "CA file"},
		{"", notPEM, "", "both"},
		{"", "", notPEM, "both"},
		{"", notPEM, notPEM, "client certificate"},
	} {
		if _, err := LoadTLS(c.ca, c.cert, c.key); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadTLS(%q, %q, %q) = %v, want an error naming %q", c.ca, c.cert, c.key, err, c.want)
		}
	}
}

// An ACL user with a password and only the commands docs/scale-out.md
// lists, on the prefix's keys and channels: the store works as that user; a wrong
// password fails New with Redis's refusal, the password nowhere in the
// error.
func TestRedisACLUser(t *testing.T) {
	const adminPW, userPW = "admin-secret-1", "user-secret-2"
	r := redistest.StartArgs(t, "--requirepass", adminPW)
	ctx := context.Background()
	admin, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{r.Addr()}, Password: adminPW, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.Do(ctx, admin.B().Arbitrary("ACL", "SETUSER", "mcp", "on", ">"+userPW,
		"~mcpwire:*", "&mcpwire:*", "+get", "+set", "+del", "+eval", "+evalsha", "+script|load", "+publish", "+subscribe", "+ping", "+info").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	base := "redis://mcp:%s@" + r.Addr() + "/0"
	s, err := New(ctx, strings.Replace(base, "%s", userPW, 1), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Create(ctx, "p", []byte("as mcp"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.Get(ctx, "p", h); err != nil || string(r.Value) != "as mcp" {
		t.Fatalf("Get = %q, %v", r.Value, err)
	}
	if _, err := s.CompareAndSet(ctx, "p", h, 1, []byte("as mcp, twice"), 0); err != nil {
		t.Fatalf("CompareAndSet (a script) as an ACL user: %v", err)
	}
	if _, err := s.Once(ctx, "p", "k", time.Minute, func() ([]byte, error) { return []byte("r"), nil }); err != nil {
		t.Fatalf("Once as an ACL user: %v", err)
	}
	got := make(chan state.Cue, 1)
	if err := s.Subscribe(ctx, func(c state.Cue) { got <- c }, nil, nil); err != nil {
		t.Fatalf("Subscribe as an ACL user limited to mcpwire:* channels: %v", err)
	}
	if err := s.Publish(ctx, state.Cue{Kind: state.CueToolsChanged}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no cue through the ACL user's subscription")
	}

	const wrong = "not-the-password-3"
	s2, err := New(ctx, strings.Replace(base, "%s", wrong, 1), Config{})
	if err == nil {
		s2.Close()
		t.Fatal("New with a wrong password succeeded")
	}
	if !errors.Is(err, state.ErrUnavailable) || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("New with a wrong password: %v; want unavailable with Redis's WRONGPASS", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Fatalf("the error shows the password: %v", err)
	}
}

func TestClientOptionForms(t *testing.T) {
	tc := &tls.Config{}
	for _, c := range []struct {
		url    string
		tls    *tls.Config
		master string
		addrs  []string
		tlsOn  bool
		auth   bool
		err    string
	}{
		{url: "redis://h:1/0", addrs: []string{"h:1"}},
		{url: "redis://h:1/0?addr=h:2&addr=h:3", addrs: []string{"h:1", "h:2", "h:3"}},
		{url: "rediss://h:1/0", addrs: []string{"h:1"}, tlsOn: true},
		{url: "rediss://h:1/0", tls: tc, addrs: []string{"h:1"}, tlsOn: true},
		{url: "redis://h:1/0", tls: tc, err: "rediss://"},
		{url: "redis-sentinel://s:1/0?addr=s:2&master=mymaster", master: "mymaster", addrs: []string{"s:1", "s:2"}},
		{url: "rediss-sentinel://u:p@s:1/0?master=m&sentinel_auth=same", tls: tc, master: "m", addrs: []string{"s:1"}, tlsOn: true, auth: true},
		{url: "redis-sentinel://s:1/0", err: "master=NAME"},
		{url: "redis-sentinel://s:1/0?master_set=m", err: "master=NAME"},
		{url: "redis-sentinel://s:1/0?master=m&sentinel_auth=yes", err: "sentinel_auth"},
		{url: "redis://s:1/0?master_set=m", err: "redis-sentinel://"},
		{url: "redis://s:1/0?master=m", err: "redis-sentinel://"},
		{url: "redis://s:1/0?sentinel_auth=same", err: "redis-sentinel://"},
		{url: "http://h:1/0", err: "scheme"},
	} {
		co, err := clientOption(c.url, c.tls)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want one naming %q", c.url, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if co.Sentinel.MasterSet != c.master || strings.Join(co.InitAddress, ",") != strings.Join(c.addrs, ",") {
			t.Errorf("%s: master %q, addresses %v; want %q, %v", c.url, co.Sentinel.MasterSet, co.InitAddress, c.master, c.addrs)
		}
		if (co.TLSConfig != nil) != c.tlsOn || (c.master != "" && co.Sentinel.TLSConfig != co.TLSConfig) {
			t.Errorf("%s: TLS %v (sentinels %v), want on: %v", c.url, co.TLSConfig != nil, co.Sentinel.TLSConfig != nil, c.tlsOn)
		}
		if c.tls != nil && (co.TLSConfig == c.tls || co.TLSConfig.ServerName != "" || co.TLSConfig.MinVersion < tls.VersionTLS12) {
			t.Errorf("%s: Config.TLS not cloned, without a pinned server name, with TLS 1.2 at least", c.url)
		}
		if (co.Sentinel.Password != "") != c.auth {
			t.Errorf("%s: sentinel auth %v, want %v", c.url, co.Sentinel.Password != "", c.auth)
		}
	}
}

// FuzzClientOption: any URL is parsed or refused, never a panic, and an
// error never shows the URL's password.
func FuzzClientOption(f *testing.F) {
	for _, s := range []string{"redis://h:1/0", "rediss://u:secretpw@h:1/0?addr=h:2", "redis-sentinel://u:secretpw@s:1/0?master=m&sentinel_auth=same",
		"rediss-sentinel://s:1/0?master=", "unix:///tmp/r.sock", "redis://u:secretpw@h:1/x", "redis://u:secretpw@[::1/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		_, err := clientOption(url, nil)
		if err == nil {
			return
		}
		// The password as written in the userinfo (the URL need not parse:
		// a parse error must not show it either), where it shows nowhere
		// else in the URL.
		_, pw, ok := strings.Cut(rawUserinfo(url), ":")
		if !ok || len(pw) < 4 || strings.Count(url, pw) != 1 || !strings.Contains(err.Error(), pw) {
			return
		}
		// The password's text shows in the error. That is a leak only if it
		// came from the URL: a password may also be a piece of a fixed
		// message ("inel" of "Sentinel"). So try the URL again with the
		// password's letters and digits moved on by one (the same URL to the
		// parser) and see whether the error follows the password.
		alt := shiftAlnum(pw)
		if alt == pw {
			t.Fatalf("error shows the password %q: %v", pw, err)
		}
		_, err2 := clientOption(strings.Replace(url, pw, alt, 1), nil)
		if err2 == nil || strings.Contains(err2.Error(), alt) {
			t.Fatalf("error shows the password %q: %v (with %q: %v)", pw, err, alt, err2)
		}
	})
}

// rawUserinfo is the userinfo of url as written: from the "://" after its
// scheme to the last "@" before the path, query or fragment.
func rawUserinfo(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || strings.ContainsAny(scheme, "/?#@") {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	i := strings.LastIndexByte(rest, '@')
	if i < 0 {
		return ""
	}
	return rest[:i]
}

// shiftAlnum moves each ASCII letter and digit of s on by one (z to a, Z
// to A, 9 to 0) and keeps every other byte and each %XX escape, so that a
// URL's userinfo parses the same with s or with the result.
func shiftAlnum(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '%':
			i += 2
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+1)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+1)%26
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
		}
	}
	return string(b)
}
