package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestLookupToolFewKeys: a registry of at most maxFewTools tools whose
// names are 4 to 16 bytes long is searched by word keys instead of the
// map; every answer must be the map's. Probes: each name, and names that
// differ from one in a single byte at its start, middle and end, that are
// one byte shorter or longer, plus names of every length from 0 to 20.
// Registries that fall back to the map (a short name, a long one, too
// many tools) are held to the same answers. Fails if a key matched a name
// it is not (length unchecked, a word left out) or missed one it is.
func TestLookupToolFewKeys(t *testing.T) {
	h := func(c *Call) error { return nil }
	cases := []struct {
		names []string
		byKey bool
	}{
		0: {nil, true},
		1: {[]string{"echo"}, true},
		2: {[]string{"echo", "ecHo", "echo_", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmnop"}, true},
		3: {[]string{"get_weather", "get_weathes", "fet_weather", "get_wxather"}, true},
		4: {[]string{"a1", "echo"}, false},                                                           // 2 bytes: the map
		5: {[]string{"echo", "abcdefghijklmnopq"}, false},                                            // 17 bytes: the map
		6: {[]string{"t001", "t002", "t003", "t004", "t005", "t006", "t007", "t008", "t009"}, false}, // 9 tools
		7: {[]string{"t001", "t002", "t003", "t004", "t005", "t006", "t007", "t008"}, true},
	}
	for i, tc := range cases {
		s := New(Config{Name: "t", Version: "1"})
		for _, n := range tc.names {
			if err := s.AddTool(Tool{Name: n, Handler: h}); err != nil {
				t.Fatalf("%d: AddTool(%q): %v", i, n, err)
			}
		}
		rc := s.regs()
		if rc.byKey != tc.byKey {
			t.Fatalf("%d: byKey %v, want %v", i, rc.byKey, tc.byKey)
		}
		if rc.byKey && len(rc.fewTools) != len(tc.names) {
			t.Fatalf("%d: %d word keys for %d tools", i, len(rc.fewTools), len(tc.names))
		}
		var probes []string
		for _, n := range tc.names {
			probes = append(probes, n, n[:len(n)-1], n+"x", "x"+n)
			for _, at := range []int{0, len(n) / 2, len(n) - 1} {
				b := []byte(n)
				b[at] ^= 1
				probes = append(probes, string(b))
			}
		}
		for n := 0; n <= 20; n++ {
			probes = append(probes, strings.Repeat("e", n), fmt.Sprintf("%0*d", n, 7))
		}
		for _, p := range probes {
			got, want := s.lookupTool([]byte(p)), rc.toolsByName[p]
			if got != want {
				t.Fatalf("%d: lookupTool(%q) = %v, the map says %v", i, p, got, want)
			}
			if want != nil && want.Name != p {
				t.Fatalf("%d: the map files %q under %q", i, want.Name, p)
			}
		}
	}
	// A registry that changes: the cache is rebuilt with its keys.
	s := New(Config{Name: "t", Version: "1"})
	_ = s.AddTool(Tool{Name: "echo", Handler: h})
	_ = s.AddTool(Tool{Name: "x", Handler: h})
	if s.regs().byKey || s.lookupTool([]byte("echo")) == nil {
		t.Fatal("a 1-byte name must send the lookup to the map, which finds echo")
	}
	s.RemoveTool("x")
	if !s.regs().byKey || s.lookupTool([]byte("echo")) == nil || s.lookupTool([]byte("x")) != nil {
		t.Fatal("after RemoveTool(x): echo by key, x gone")
	}
}

// TestCheckVersionFirst: Request.CheckVersion takes the first supported
// version by its word key (Server.ver0) before the list; it must still
// accept exactly the listed versions: each of them, and none of the
// values one byte off the first (each byte flipped, one shorter, one
// longer). Fails if the key accepts a value that is not the version.
func TestCheckVersionFirst(t *testing.T) {
	s := New(Config{Name: "t", Version: "1", SupportedVersions: []string{"2026-07-28", "2025-11-25"}})
	check := func(v string) bool {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `"}}}`)
		var env codec.Envelope
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatalf("peek %s: %v", msg, err)
		}
		r := NewScope(s, "").Begin(context.Background(), msg, &env, &capture{done: make(chan struct{})}, nil)
		return r.CheckVersion() == nil
	}
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		if !check(v) {
			t.Fatalf("%s refused", v)
		}
	}
	first := "2026-07-28"
	var near []string
	for i := range first {
		b := []byte(first)
		b[i] ^= 0x01
		near = append(near, string(b))
	}
	near = append(near, first[:len(first)-1], first+"0", "0"+first, "")
	for _, v := range near {
		if check(v) {
			t.Fatalf("%q accepted", v)
		}
	}
}
