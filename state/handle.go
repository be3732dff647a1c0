package state

import (
	"crypto/rand"
	"encoding/base64"
)

// HandleBytes is the number of random bytes in a handle made by NewHandle:
// 128 bits from crypto/rand (E3).
const HandleBytes = 16

// handleLen is the length of an encoded handle (unpadded base64url).
var handleLen = base64.RawURLEncoding.EncodedLen(HandleBytes)

// NewHandle returns a fresh handle: HandleBytes from crypto/rand, encoded
// as unpadded base64url (22 characters).
func NewHandle() Handle {
	var b [HandleBytes]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read crashes the program instead)
	return Handle(base64.RawURLEncoding.EncodeToString(b[:]))
}

// Valid reports whether h has the shape NewHandle gives: stores answer
// ErrNotFound for any other string without looking it up, so a handle
// taken from request content cannot be used to probe or bloat the store.
func (h Handle) Valid() bool {
	if len(h) != handleLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
