package redisstate

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseCue: any message on the cue channel is either refused or a cue
// that encodes back to the same bytes.
func FuzzParseCue(f *testing.F) {
	for _, s := range []string{"", "\x01", "\x04test://r", "\x04", "\x05x", "\x01x", "\xff\x00",
		"\x05\x00\x00\x00\x00\x00\x00\x00\x00\x01", "\x05\x04\x01\x02\x03\x04\x05\x06\x07\x08test://r"} {
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

// FuzzOnceRecord: any value of a Once key is either refused or has a
// known tag and re-encodes to the same bytes.
func FuzzOnceRecord(f *testing.F) {
	for _, s := range []string{"", "d", "dresult", "x", "xy", "p0123456789abcdef0123456789abcdef", "p", "pXYZ", "q"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tag, rest, ok := parseOnce(b)
		if !ok {
			return
		}
		switch tag {
		case tagDone, tagTooLarge, tagPending:
		default:
			t.Fatalf("parseOnce(%q): tag %q", b, tag)
		}
		if tag == tagPending && len(rest) != tokenLen {
			t.Fatalf("parseOnce(%q): token %q", b, rest)
		}
		if enc := append([]byte{tag}, rest...); !bytes.Equal(enc, b) {
			t.Fatalf("parseOnce(%q) re-encodes as %q", b, enc)
		}
	})
}

// FuzzKeySlot: the slot is in range, a key with a non-empty hash tag has
// its tag's slot, and a shard channel index is in range.
func FuzzKeySlot(f *testing.F) {
	for _, s := range []string{"", "foo", "{foo}bar", "a{}b", "{", "}{x}", "mcpwire:cues{12}", "{{a}}", "x{y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		sl := keySlot(key)
		if sl >= clusterSlots {
			t.Fatalf("keySlot(%q) = %d", key, sl)
		}
		want := crc16(key) % clusterSlots
		if i := strings.IndexByte(key, '{'); i >= 0 {
			if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
				want = crc16(key[i+1:i+1+j]) % clusterSlots
			}
		}
		if sl != want {
			t.Fatalf("keySlot(%q) = %d, want %d", key, sl, want)
		}
		if n := shardOf(key, 16); n < 0 || n >= 16 {
			t.Fatalf("shardOf(%q, 16) = %d", key, n)
		}
	})
}
