package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseClientFlags parses args as probe/call's client flags.
func parseClientFlags(t *testing.T, args ...string) *clientFlags {
	t.Helper()
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &cf
}

// TestOAuthClientSecretNotInArgv: the client secret comes from
// --oauth-client-secret-file (first line) or $MCPWIRE_OAUTH_CLIENT_SECRET,
// the file first; --oauth-client-secret is refused with a message naming
// both, and the help does not show it.
func TestOAuthClientSecretNotInArgv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPWIRE_OAUTH_CLIENT_SECRET", "from-env")
	cfg, err := parseClientFlags(t, "--oauth", "client-credentials", "--oauth-client-id", "c", "--oauth-client-secret-file", file).oauthConfig(nil)
	if err != nil || cfg.ClientSecret != "from-file" {
		t.Fatalf("secret file: %v, secret %q", err, cfg.ClientSecret)
	}
	cfg, err = parseClientFlags(t, "--oauth", "client-credentials", "--oauth-client-id", "c").oauthConfig(nil)
	if err != nil || cfg.ClientSecret != "from-env" {
		t.Fatalf("environment: %v, secret %q", err, cfg.ClientSecret)
	}
	_, err = parseClientFlags(t, "--oauth", "client-credentials", "--oauth-client-secret-file", filepath.Join(t.TempDir(), "absent")).oauthConfig(nil)
	if err == nil || !strings.Contains(err.Error(), "--oauth-client-secret-file") {
		t.Fatalf("absent file: %v", err)
	}
	_, err = parseClientFlags(t, "--oauth", "client-credentials", "--oauth-client-id", "c", "--oauth-client-secret", "s3cret").oauthConfig(nil)
	if err == nil || !strings.Contains(err.Error(), "--oauth-client-secret-file") || !strings.Contains(err.Error(), "MCPWIRE_OAUTH_CLIENT_SECRET") {
		t.Fatalf("--oauth-client-secret: %v, want it refused", err)
	}
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	var help bytes.Buffer
	fs.SetOutput(&help)
	printVisibleDefaults(fs)
	if strings.Contains(help.String(), "-oauth-client-secret ") || !strings.Contains(help.String(), "-oauth-client-secret-file") {
		t.Errorf("help:\n%s", help.String())
	}
}

// TestAuthorizePromptEscaped: the authorization URL, built from the
// authorization server's metadata, is printed escaped (RELIABILITY F7).
func TestAuthorizePromptEscaped(t *testing.T) {
	got := authorizePrompt("https://as.example/authorize\x1b]0;pwned\x07\u202e?x=1")
	if strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Fatalf("a terminal control reached the prompt: %q", got)
	}
	if want := `https://as.example/authorize\x1b]0;pwned\x07\u202e?x=1`; !strings.Contains(got, want) {
		t.Errorf("prompt %q lacks %q", got, want)
	}
}
