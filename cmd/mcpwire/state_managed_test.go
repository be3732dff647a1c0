package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/state"
)

// TestServeManagedRedis (issue 22 item 2): serve opens a managed Redis —
// rediss:// with a private CA and a client certificate (--state-tls-*),
// its password from --state-password-file — and refuses a wrong
// password with Redis's answer and without the password.
func TestServeManagedRedis(t *testing.T) {
	t.Setenv(mrtr.KeysEnv, strings.Repeat("ab", 32))
	t.Setenv(statePasswordEnv, "")
	const pw = "managed-pw-1"
	_, tl := redistest.StartTLS(t, "--requirepass", pw)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--http", "127.0.0.1:0", "--state", tl.URL(), "--state-password-file", pwFile,
		"--state-tls-ca", tl.CAFile, "--state-tls-cert", tl.Cert, "--state-tls-key", tl.Key}
	c, err := configOf(args...)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := openState(context.Background(), c.state, c.stateOpt, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := st.Store.Create(ctx, "p", []byte("managed"), time.Minute)
	if err == nil {
		_, err = st.Store.Get(ctx, "p", h)
	}
	_ = st.Close()
	if err != nil {
		t.Fatalf("a record through the managed Redis: %v", err)
	}

	// Without the client certificate: refused.
	c, err = configOf(args[:len(args)-4]...)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := openState(ctx, c.state, c.stateOpt, log); err == nil {
		_ = st.Close()
		t.Fatal("opened without the CA and client certificate")
	}

	const wrong = "wrong-pw-2"
	if err := os.WriteFile(pwFile, []byte(wrong), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = configOf(args...)
	if err != nil {
		t.Fatal(err)
	}
	st, err = openState(ctx, c.state, c.stateOpt, log)
	if err == nil {
		_ = st.Close()
		t.Fatal("opened with a wrong password")
	}
	if !errors.Is(err, state.ErrUnavailable) || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), wrong) {
		t.Fatalf("wrong password: %v; want Redis's WRONGPASS without the password", err)
	}
}

// TestServeStateTLSFlags: --state-tls-* need a --state with TLS; the
// Sentinel forms are --state URLs and take the password like the others;
// --state-min-replicas reaches redisstate.Config, needs a shared --state
// and is not negative.
func TestServeStateTLSFlags(t *testing.T) {
	t.Setenv(mrtr.KeysEnv, strings.Repeat("ab", 32))
	t.Setenv(statePasswordEnv, "envpw")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	for _, st := range []string{"memory", "redis://127.0.0.1:1/0", "redis-sentinel://127.0.0.1:1/0?master=m"} {
		if _, err := configOf("--http", "127.0.0.1:0", "--state", st, "--state-tls-ca", ca); err == nil || !strings.Contains(err.Error(), "rediss://") {
			t.Errorf("--state %s --state-tls-ca: %v, want refused naming rediss://", st, err)
		}
	}
	if _, err := configOf("--http", "127.0.0.1:0", "--state", "rediss://127.0.0.1:1/0", "--state-tls-ca", ca); err == nil || !strings.Contains(err.Error(), "CA file") {
		t.Errorf("a missing CA file: %v", err)
	}
	c, err := configOf("--http", "127.0.0.1:0", "--state", "rediss-sentinel://mcp@127.0.0.1:1/0?master=m", "--state-min-replicas", "1")
	if err != nil || c.state != "rediss-sentinel://mcp:envpw@127.0.0.1:1/0?master=m" || c.stateOpt.MinReplicas != 1 {
		t.Fatalf("a Sentinel URL with $%s and --state-min-replicas 1: %v %q %+v", statePasswordEnv, err, c.state, c.stateOpt)
	}
	for _, args := range [][]string{{"--state-min-replicas", "-1", "--state", "redis://127.0.0.1:1/0"}, {"--state-min-replicas", "1"}} {
		if _, err := configOf(append([]string{"--http", "127.0.0.1:0"}, args...)...); err == nil || !strings.Contains(err.Error(), "--state-min-replicas") {
			t.Errorf("%v: %v, want refused", args, err)
		}
	}
}
