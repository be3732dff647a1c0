package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadStateKeys(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := strings.Repeat("ab", 32), strings.Repeat("0f", 16)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == stateKeysEnv {
				return v
			}
			return ""
		}
	}
	for i, v := range []struct {
		file, env string
		want      [][]byte
		wantErr   string
	}{
		0: {},
		1: {file: write("a", "# fleet keys\n"+k1+"\n\n"+k2+"\n"), want: [][]byte{bytes.Repeat([]byte{0xab}, 32), bytes.Repeat([]byte{0x0f}, 16)}},
		2: {env: k2 + " , " + k1, want: [][]byte{bytes.Repeat([]byte{0x0f}, 16), bytes.Repeat([]byte{0xab}, 32)}},
		3: {file: write("b", k1), env: k2, want: [][]byte{bytes.Repeat([]byte{0xab}, 32)}}, // the file wins
		4: {env: "base64:" + "AAAAAAAAAAAAAAAAAAAAAA==", want: [][]byte{make([]byte, 16)}},
		5: {env: "abcd", wantErr: "at least 16"},
		6: {env: "zz" + k1, wantErr: "not hex"},
		7: {file: write("c", "# nothing\n"), wantErr: "no keys"},
		8: {file: filepath.Join(dir, "missing"), wantErr: "no such file"},
	} {
		got, err := loadStateKeys(v.file, env(v.env))
		if v.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), v.wantErr) {
				t.Errorf("%d: err %v, want %q", i, err, v.wantErr)
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
