package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/mcpwire/mcpwire/mrtr"
)

// configOf parses serve's arguments and builds its configuration.
func configOf(args ...string) (*serveConfig, error) { return parseServeFlags(args).config() }

// TestServeSharedStateNeedsKeys (issue 20, E5): a shared --state without
// shared requestState keys refuses to start, naming the way out; a key
// file, $MCPWIRE_STATE_KEYS or --ephemeral-state-key (a warning then)
// start it, and memory state needs none. Before, each replica silently
// signed with a random key of its own.
func TestServeSharedStateNeedsKeys(t *testing.T) {
	t.Setenv(mrtr.KeysEnv, "")
	base := []string{"--http", "127.0.0.1:0", "--state", "redis://127.0.0.1:1/0"}
	_, err := configOf(base...)
	if err != errNoSharedKeys || !strings.Contains(err.Error(), "--state-key-file") || !strings.Contains(err.Error(), "--ephemeral-state-key") {
		t.Fatalf("shared state, no keys: %v", err)
	}
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := configOf(append(base, "--state-key-file", keys)...); err != nil {
		t.Errorf("with --state-key-file: %v", err)
	}
	if _, err := configOf(append(base, "--ephemeral-state-key")...); err != nil {
		t.Errorf("with --ephemeral-state-key: %v", err)
	}
	if _, err := configOf("--http", "127.0.0.1:0"); err != nil {
		t.Errorf("memory state: %v", err)
	}
	t.Setenv(mrtr.KeysEnv, strings.Repeat("cd", 32))
	if _, err := configOf(base...); err != nil {
		t.Errorf("with $%s: %v", mrtr.KeysEnv, err)
	}
}

// TestServeStatePassword (F10): the Redis password comes from
// --state-password-file or $MCPWIRE_STATE_PASSWORD and reaches only the
// URL serve opens; one written in the --state URL (argv, visible to every
// local user) is refused unless --insecure-state-url-password, and no
// error shows it.
func TestServeStatePassword(t *testing.T) {
	t.Setenv(mrtr.KeysEnv, strings.Repeat("ab", 32))
	t.Setenv(statePasswordEnv, "")
	base := []string{"--http", "127.0.0.1:0"}
	_, err := configOf(append(base, "--state", "redis://app:hunter2@127.0.0.1:1/0")...)
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "--state-password-file") {
		t.Fatalf("password in the URL: %v", err)
	}
	c, err := configOf(append(base, "--state", "redis://app:hunter2@127.0.0.1:1/0", "--insecure-state-url-password")...)
	if err != nil || c.state != "redis://app:hunter2@127.0.0.1:1/0" {
		t.Fatalf("password in the URL, allowed: %v", err)
	}
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("s3cr:t@/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = configOf(append(base, "--state", "redis://app@127.0.0.1:1/0", "--state-password-file", file)...)
	if err != nil || c.state != "redis://app:s3cr%3At%40%2Fx@127.0.0.1:1/0" {
		t.Fatalf("--state-password-file: %v %q", err, c.state)
	}
	if _, err := configOf(append(base, "--state", "redis://:other@127.0.0.1:1/0", "--state-password-file", file)...); err == nil || strings.Contains(err.Error(), "other") {
		t.Errorf("two passwords: %v", err)
	}
	if _, err := configOf(append(base, "--state-password-file", file)...); err == nil {
		t.Error("--state-password-file with memory state accepted")
	}
	t.Setenv(statePasswordEnv, "envpw")
	if c, err = configOf(append(base, "--state", "redis://127.0.0.1:1/0")...); err != nil || c.state != "redis://:envpw@127.0.0.1:1/0" {
		t.Fatalf("$%s: %v %q", statePasswordEnv, err, c.state)
	}
}

// TestServeSocketsNeedAuth (F3): --allow-non-loopback no longer opens a
// TCP listener to anonymous callers: a non-loopback --tcp, or a --unix
// socket other users may open, needs --insecure-no-auth-sockets.
func TestServeSocketsNeedAuth(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--tcp", "0.0.0.0:0", "--allow-non-loopback"}, "--insecure-no-auth-sockets"},
		{[]string{"--tcp", "0.0.0.0:0", "--allow-non-loopback", "--insecure-no-auth-sockets"}, ""},
		{[]string{"--tcp", "127.0.0.1:0"}, ""},
		{[]string{"--unix", "/tmp/x.sock", "--unix-mode", "0660"}, "--insecure-no-auth-sockets"},
		{[]string{"--unix", "/tmp/x.sock", "--unix-mode", "0660", "--insecure-no-auth-sockets"}, ""},
		{[]string{"--unix", "/tmp/x.sock", "--unix-mode", "0600"}, ""},
		{[]string{"--unix", "/tmp/x.sock", "--unix-mode", "rw"}, "octal"},
		{[]string{"--unix", "/tmp/x.sock", "--unix-mode", "1777"}, "octal"},
	} {
		c, err := configOf(tc.args...)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: %v, want an error naming %s", tc.args, err, tc.wantErr)
		case err == nil && strings.Contains(strings.Join(tc.args, " "), "--unix-mode 0"):
			if c.sockets.cfg.UnixMode.Perm() == 0 {
				t.Errorf("%q: UnixMode not passed on", tc.args)
			}
		}
	}
}

// TestServeAdminGuards (F1, F10): the admin listener of `serve` refuses a
// foreign Host (421), requires --admin-token-file's token (401), serves
// pprof only with --admin-pprof, counts its refusals in /metrics, and its
// cmdline and the logs never show the Redis password, even one given in
// the URL with --insecure-state-url-password.
func TestServeAdminGuards(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.RequireUserAuth("app", "hunter2")
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte("adm1n-t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// run starts serve; stop ends it and returns its stderr.
	run := func(t *testing.T, extra ...string) (base string, stop func() string) {
		adminAddr := freeAddr(t)
		args := append([]string{"serve", "--http", freeAddr(t), "--admin", adminAddr, "--log-level", "debug",
			"--ephemeral-state-key"}, extra...)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "MCPWIRE_TEST_MAIN="+strings.Join(args, "\x1f"), mrtr.KeysEnv+"=")
		stderr := new(bytes.Buffer)
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		stop = func() string {
			once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			return stderr.String()
		}
		t.Cleanup(func() { stop() })
		base = "http://" + adminAddr
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if code, _, err := adminGet(base + "/healthz"); err == nil && code == 200 {
				return base, stop
			}
			if time.Now().After(deadline) {
				t.Fatalf("the admin listener never answered\n%s", stop())
			}
		}
	}
	get := func(t *testing.T, url, host, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	t.Run("defaults", func(t *testing.T) {
		base, _ := run(t)
		if code, _ := get(t, base+"/debug/pprof/", "", ""); code != 404 {
			t.Errorf("pprof without --admin-pprof: %d, want 404", code)
		}
		if code, _ := get(t, base+"/metrics", "evil.example", ""); code != 421 {
			t.Errorf("foreign Host: %d, want 421", code)
		}
		if code, body := get(t, base+"/metrics", "", ""); code != 200 || !strings.Contains(body, "\nmcpwire_admin_bad_host_total 1\n") {
			t.Errorf("/metrics: %d, want 200 with the refusal counted", code)
		}
	})
	t.Run("guarded", func(t *testing.T) {
		state := "redis://app:hunter2@" + mr.Addr() + "/0"
		base, stop := run(t, "--admin-token-file", tokFile, "--admin-host", "metrics.internal", "--admin-pprof",
			"--state", state, "--insecure-state-url-password")
		if code, _ := get(t, base+"/metrics", "", ""); code != 401 {
			t.Errorf("/metrics without the token: %d, want 401", code)
		}
		if code, _ := get(t, base+"/metrics", "", "wrong"); code != 401 {
			t.Errorf("/metrics with a wrong token: %d, want 401", code)
		}
		if code, _ := get(t, base+"/readyz", "", ""); code != 200 {
			t.Errorf("/readyz without the token: %d, want 200", code)
		}
		code, body := get(t, base+"/metrics", "metrics.internal:9090", "adm1n-t0ken")
		if code != 200 || !strings.Contains(body, "\nmcpwire_admin_unauthorized_total 2\n") {
			t.Errorf("/metrics with the token and an --admin-host name: %d", code)
		}
		code, body = get(t, base+"/debug/pprof/cmdline", "", "adm1n-t0ken")
		if code != 200 || strings.Contains(body, "hunter2") || !strings.Contains(body, "redis://app:xxxxx@") {
			t.Errorf("cmdline: %d %q", code, body)
		}
		logs := stop()
		if strings.Contains(logs, "hunter2") || !strings.Contains(logs, "redis://app:xxxxx@") {
			t.Errorf("the password is in the logs, or the state URL is not:\n%s", logs)
		}
		if !strings.Contains(logs, "WARNING: --ephemeral-state-key") {
			t.Errorf("no warning for --ephemeral-state-key:\n%s", logs)
		}
	})
}

// TestServeFlagsNeedTheirFlag: a flag that only means something with
// another one is refused without it, naming both, as --admin-token-file
// without --admin always was; and a --state typo is named as one before
// the shared-state checks would take it for a Redis URL.
func TestServeFlagsNeedTheirFlag(t *testing.T) {
	t.Setenv(mrtr.KeysEnv, "")
	for _, tc := range []struct {
		args    []string
		wantErr string // "" for none
	}{
		{[]string{"--http", "127.0.0.1:0", "--admin-host", "metrics.internal"}, "--admin-host needs --admin"},
		{[]string{"--http", "127.0.0.1:0", "--admin-pprof"}, "--admin-pprof needs --admin"},
		{[]string{"--http", "127.0.0.1:0", "--admin-token-file", "/nonexistent"}, "--admin-token-file needs --admin"},
		{[]string{"--http", "127.0.0.1:0", "--insecure-no-auth-sockets"}, "--insecure-no-auth-sockets needs --tcp or --unix"},
		{[]string{"--http", "127.0.0.1:0", "--unix-mode", "0600"}, "--unix-mode needs --unix"},
		{[]string{"--http", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--admin-host", "metrics.internal", "--admin-pprof"}, ""},
		{[]string{"--tcp", "127.0.0.1:0", "--insecure-no-auth-sockets"}, ""},
		{[]string{"--http", "127.0.0.1:0", "--state", "memroy"}, `--state "memroy": want memory or redis://`},
		{[]string{"--http", "127.0.0.1:0", "--state", "redis.internal:6379"}, "want memory or redis://"},
		{[]string{"--http", "127.0.0.1:0", "--state", "memory"}, ""},
	} {
		_, err := configOf(tc.args...)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: %v, want an error saying %s", tc.args, err, tc.wantErr)
		}
	}
}
