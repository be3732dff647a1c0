package streamhttp

import (
	"bytes"
	"testing"
)

// TestShortEqual: shortEqual answers as bytes.Equal for every length from
// 0 to 24 against an equal value, the same with any one byte changed,
// and values one byte shorter or longer. It stands for the endpoint's
// path compare (fastHandler) and the mirrored version and method compares
// (check, HVAL-02 steps 9 and 11). Fails when either of its loads is
// dropped, or a length outside 4 to 16 takes them.
func TestShortEqual(t *testing.T) {
	for n := 0; n <= 24; n++ {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte('a' + i)
		}
		b := bytes.Clone(a)
		check := func(x, y []byte) {
			t.Helper()
			if got, want := shortEqual(x, y), bytes.Equal(x, y); got != want {
				t.Fatalf("shortEqual(%q, %q) = %v, want %v", x, y, got, want)
			}
		}
		check(a, b)
		for i := range b {
			b[i] ^= 0x20
			check(a, b)
			check(b, a)
			b[i] ^= 0x20
		}
		if n > 0 {
			check(a, b[:n-1])
			check(a[:n-1], b)
		}
		check(a, append(bytes.Clone(b), 'z'))
		// The same bytes at another place in a larger buffer: only what
		// the slices hold counts.
		big := append([]byte("xxxx"), a...)
		check(a, big[4:])
		check(a, big[:n])
	}
}

// TestTrimOWS: trimOWS drops the spaces and tabs around a value (HDR-07)
// and nothing else, as bytes.Trim with those two does, for every byte
// value first, last, or both, around one byte and alone, and for runs of
// them. Its shortcut returns a value whose first and last bytes are above
// ' ' as it is; this fails when the shortcut takes a space or a tab.
func TestTrimOWS(t *testing.T) {
	check := func(v []byte) {
		t.Helper()
		if got, want := trimOWS(v), bytes.Trim(v, " \t"); !bytes.Equal(got, want) {
			t.Fatalf("trimOWS(%q) = %q, want %q", v, got, want)
		}
	}
	check(nil)
	check([]byte{})
	for c := 0; c < 256; c++ {
		b := byte(c)
		check([]byte{b})
		check([]byte{b, 'x'})
		check([]byte{'x', b})
		check([]byte{b, 'x', b})
		check([]byte{b, b, 'x', 'y', b, b})
	}
}
