package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/mrtr"
)

// TestStateSigner: serve signs the fixtures' requestState with the keys
// of --state-key-file, else MCPWIRE_STATE_KEYS (package mrtr parses both;
// mrtr's tests cover the format), and names the flag in its errors.
func TestStateSigner(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	if err := os.WriteFile(file, []byte("# fleet\n"+strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	peer, err := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{bytes.Repeat([]byte{0xab}, 32)}})
	if err != nil {
		t.Fatal(err)
	}
	b := mrtr.Binding{Method: "tools/call", Target: "t"}
	st, _ := peer.Seal(b, nil)
	log := slog.New(slog.DiscardHandler)
	t.Setenv(mrtr.KeysEnv, "")
	s, err := (&serveFlags{stateKeyFile: file}).stateSigner(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(b, st); err != nil {
		t.Errorf("a replica with the same key file refuses the state: %v", err)
	}
	t.Setenv(mrtr.KeysEnv, strings.Repeat("ab", 32))
	if s, err = (&serveFlags{}).stateSigner(log); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(b, st); err != nil {
		t.Errorf("%s: %v", mrtr.KeysEnv, err)
	}
	_, err = (&serveFlags{stateKeyFile: filepath.Join(dir, "missing")}).stateSigner(log)
	if err == nil || !strings.HasPrefix(err.Error(), "--state-key-file: ") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	t.Setenv(mrtr.KeysEnv, "abcd")
	if _, err = (&serveFlags{}).stateSigner(log); err == nil || !strings.Contains(err.Error(), mrtr.KeysEnv) || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("short key in the environment: %v", err)
	}
}

func TestPrefixList(t *testing.T) {
	var p prefixList
	for _, v := range []string{"127.0.0.1/32", "10.1.2.3/8,::1", "192.0.2.7"} {
		if err := p.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.String(); got != "127.0.0.1/32,10.0.0.0/8,::1/128,192.0.2.7/32" {
		t.Fatalf("%s", got)
	}
	if err := p.Set("nope"); err == nil {
		t.Fatal("accepted nope")
	}
}
