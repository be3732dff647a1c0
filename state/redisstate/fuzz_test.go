package redisstate

import (
	"bytes"
	"testing"
)

// FuzzParseCue: any message on the cue channel is either refused or a cue
// that encodes back to the same bytes.
func FuzzParseCue(f *testing.F) {
	for _, s := range []string{"", "\x01", "\x04test://r", "\x04", "\x05x", "\x01x", "\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		c, ok := parseCue(msg)
		if !ok {
			return
		}
		if enc := string(appendCue(nil, c)); enc != msg {
			t.Fatalf("parseCue(%q) = %+v, which encodes as %q", msg, c, enc)
		}
	})
}

// FuzzDecodeRecord: any stored string is either refused or decodes to a
// record whose value is the bytes after the header.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte("00000000000000010000000000000000value"))
	f.Add([]byte("0000000000000001"))
	f.Add([]byte("zzzzzzzzzzzzzzzz0000000000000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		if len(b) < recHeader || !bytes.Equal(r.Value, b[recHeader:]) {
			t.Fatalf("decodeRecord(%q) = %+v", b, r)
		}
		var exp uint64
		if !r.Expires.IsZero() {
			exp = uint64(r.Expires.UnixMilli())
		}
		if enc := appendHex16(appendHex16(nil, r.Version), exp); !bytes.EqualFold(enc, b[:recHeader]) {
			t.Fatalf("decodeRecord(%q): header re-encodes as %q", b, enc)
		}
	})
}
