package engine

import "encoding/binary"

// wordKey holds a string of 4 to 16 bytes as two little-endian words, its
// first and its last 8 bytes (4 bytes each for a string of 4 to 7 bytes;
// overlapping when it is shorter than twice that), so that comparing raw
// bytes with it is two loads and two compares, inlined, where a string
// comparison is a call of memequal. The request path compares a few such
// strings per request: the protocol version (Server.ver0), the tool name
// a batch found last (Batch.toolKey).
type wordKey struct {
	n      int // the string's length; 0: the string is not 4 to 16 bytes long
	lo, hi uint64
}

// makeWordKey returns s's key, or the zero key (which matches nothing)
// when s is shorter than 4 or longer than 16 bytes.
func makeWordKey(s string) wordKey {
	b := []byte(s)
	switch n := len(b); {
	case n >= 8 && n <= 16:
		return wordKey{n: n, lo: binary.LittleEndian.Uint64(b), hi: binary.LittleEndian.Uint64(b[n-8:])}
	case n >= 4 && n < 8:
		return wordKey{n: n, lo: uint64(binary.LittleEndian.Uint32(b)), hi: uint64(binary.LittleEndian.Uint32(b[n-4:]))}
	}
	return wordKey{}
}

// is reports whether b is the key's string; always false for the zero
// key. The two words cover every byte of b, which has n bytes, and
// nothing past b is read.
func (k *wordKey) is(b []byte) bool {
	if n := k.n; len(b) != n || n == 0 {
		return false
	} else if n >= 8 {
		return binary.LittleEndian.Uint64(b) == k.lo && binary.LittleEndian.Uint64(b[n-8:]) == k.hi
	}
	return binary.LittleEndian.Uint32(b) == uint32(k.lo) && binary.LittleEndian.Uint32(b[len(b)-4:]) == uint32(k.hi)
}
