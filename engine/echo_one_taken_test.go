package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unsafe"
)

// TestEchoOneTaken: echoOne writes the response itself in the case it is
// for (the text is Out's one plain string of 8 to 16 bytes, an id of at
// most 16, room in out), the same bytes as structuredFlat, for tails of
// two and three arrays; and it declines, writing nothing, when the text
// differs from the string in either word, the id is longer, or out lacks
// room. The end-to-end tests compare bytes only: a declined echo is
// answered by structuredFlat with the same bytes.
func TestEchoOneTaken(t *testing.T) {
	h := func(_ *Call, in oneArgs) (oneOut, error) { return oneOut(in), nil }
	// Server names for a tail of 64 to 128 bytes and one of 129 to 192.
	for _, name := range []string{"z", strings.Repeat("n", 60)} {
		s := New(Config{Name: name})
		if err := AddTool(s, Tool{Name: "one", Inline: true}, h); err != nil {
			t.Fatal(err)
		}
		tt := s.tools["one"].args.typed
		if !tt.echo || (len(tt.oneTail) > 128) != (len(name) > 1) {
			t.Fatalf("name %q: tail of %d bytes, echo %v", name, len(tt.oneTail), tt.echo)
		}
		for _, v := range []string{"hello wo", "hello world", "hello world12345"} {
			for _, id := range []string{"1", "1234", "12345678", "1234567890123456"} {
				// The string in the Call's chunk (plain), the text a copy.
				call := func(text string, id string, room int) (*Call, bool) {
					c := &Call{}
					c.env.ID = []byte(id)
					c.strs.b = []byte(v)
					c.strs.lo, c.strs.hi = 0, len(v)
					c.out = make([]byte, 0, room)
					out := oneOut{S: unsafe.String(&c.strs.b[0], len(v))}
					return c, c.echoOne(tt, []byte(text), unsafe.Pointer(&out))
				}
				c, ok := call(v, id, 1024)
				if !ok {
					t.Fatalf("tail %d, %q, id %s: echoOne declined", len(tt.oneTail), v, id)
				}
				want := &Call{}
				want.env.ID = []byte(id)
				want.strs = c.strs
				out := oneOut{S: unsafe.String(&c.strs.b[0], len(v))}
				if !want.structuredFlat(tt, []byte(v), unsafe.Pointer(&out)) {
					t.Fatal("structuredFlat declined")
				}
				if !bytes.Equal(c.out, want.out) || c.esc != want.esc || !c.result || c.open || c.rkind != want.rkind {
					t.Fatalf("tail %d, %q, id %s:\necho %s\nflat %s", len(tt.oneTail), v, id, c.out, want.out)
				}
				// Declines: nothing written, nothing set.
				first, last := "x"+v[1:], v[:len(v)-1]+"x"
				for i, d := range []struct {
					text, id string
					room     int
				}{{first, id, 1024}, {last, id, 1024}, {v, id + "0123456789abcdef", 1024}, {v, id, len(want.out) - 1}} {
					if c, ok := call(d.text, d.id, d.room); ok || len(c.out) != 0 || c.result {
						t.Fatalf("tail %d, %q, id %s: decline %d taken", len(tt.oneTail), v, id, i)
					}
				}
				if c, ok := call(v, id, len(want.out)); !ok || !bytes.Equal(c.out, want.out) {
					t.Fatalf("tail %d, %q, id %s: exact room: %v %s", len(tt.oneTail), v, id, ok, c.out)
				}
			}
		}
		_ = s.Shutdown(context.Background())
	}
}
