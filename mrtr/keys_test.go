package mrtr_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/mrtr"
)

func TestLoadKeys(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := strings.Repeat("ab", 32), strings.Repeat("0f", 16)
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == mrtr.KeysEnv {
				return v
			}
			return ""
		}
	}
	ab, zf := bytes.Repeat([]byte{0xab}, 32), bytes.Repeat([]byte{0x0f}, 16)
	for i, v := range []struct {
		file, env string
		want      [][]byte
		wantErr   string
	}{
		0:  {},
		1:  {file: write("a", "# fleet keys\n"+k1+"\n\n"+k2+"\n", 0o600), want: [][]byte{ab, zf}},
		2:  {env: k2 + " , " + k1, want: [][]byte{zf, ab}},
		3:  {file: write("b", k1, 0o600), env: k2, want: [][]byte{ab}}, // the file wins
		4:  {env: "base64:" + "AAAAAAAAAAAAAAAAAAAAAA==", want: [][]byte{make([]byte, 16)}},
		5:  {env: "base64:q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s", want: [][]byte{ab}},
		6:  {file: write("c", "  "+k2+" # not a comment\n", 0o600), wantErr: "key 1: not hex"},
		7:  {file: write("d", "# new, then old\r\n"+k1+",\r\n"+k2+"\r\n", 0o600), want: [][]byte{ab, zf}},
		8:  {env: "abcd", wantErr: "at least 16"},
		9:  {env: "zz" + k1, wantErr: "not hex"},
		10: {env: k1 + ",base64:!!!!", wantErr: "key 2: not base64"},
		11: {file: write("e", "# nothing\n", 0o600), wantErr: "no keys"},
		12: {file: filepath.Join(dir, "missing"), wantErr: "no such file"},
		13: {env: " , ", wantErr: "no keys"},
	} {
		got, err := mrtr.LoadKeys(v.file, env(v.env), slog.New(slog.DiscardHandler))
		if v.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), v.wantErr) {
				t.Errorf("%d: err %v, want %q", i, err, v.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), k1) || strings.Contains(err.Error(), k2)) {
				t.Errorf("%d: the error shows a key: %v", i, err)
			}
			continue
		}
		if err != nil || len(got) != len(v.want) {
			t.Errorf("%d: %x %v", i, got, err)
			continue
		}
		for j := range got {
			if !bytes.Equal(got[j], v.want[j]) {
				t.Errorf("%d: key %d = %x", i, j, got[j])
			}
		}
	}
	if _, err := mrtr.ParseKeys(""); !errors.Is(err, mrtr.ErrNoKeys) {
		t.Errorf("ParseKeys(\"\"): %v", err)
	}

	// A key file others can read loads, with a warning.
	var logged bytes.Buffer
	open := write("open", k1, 0o644)
	if err := os.Chmod(open, 0o644); err != nil { // umask may have narrowed it
		t.Fatal(err)
	}
	keys, err := mrtr.LoadKeys(open, nil, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil || len(keys) != 1 || !strings.Contains(logged.String(), "readable by group or others") {
		t.Errorf("0644 key file: %v, log %q", err, logged.String())
	}
}
