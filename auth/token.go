package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// tokenHeader is what the pre-parse reads of a compact JWS header. The
// signature is checked by go-jose, which parses the header again; these
// values only sort the token (JWT or opaque) and refuse it early.
type tokenHeader struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ"`
	Crit []string `json:"crit"`
}

var (
	// errNotJWT: the token does not have the three segments of a compact
	// JWS (an opaque token, or a JWE).
	errNotJWT = errors.New("auth: not a JWT")
	// errMalformed: three segments, but not a JWS header we accept.
	errMalformed = errors.New("auth: malformed JWT")
)

// maxHeaderBytes bounds the decoded JOSE header of a token.
const maxHeaderBytes = 4 << 10

// parseHeader checks the shape of a compact JWS (RFC 7515 §7.1): three
// base64url segments without padding, a JSON object header naming an
// algorithm of allowed and no critical extension (RFC 7515 §4.1.11: we
// understand none). It returns errNotJWT for a token of another shape.
func parseHeader(tok string, allowed []string) (tokenHeader, error) {
	var h tokenHeader
	if strings.Count(tok, ".") != 2 {
		return h, errNotJWT
	}
	seg, rest, _ := strings.Cut(tok, ".")
	payload, sig, _ := strings.Cut(rest, ".")
	if seg == "" || payload == "" || !isB64URL(seg) || !isB64URL(payload) || !isB64URL(sig) {
		return h, errMalformed
	}
	if base64.RawURLEncoding.DecodedLen(len(seg)) > maxHeaderBytes {
		return h, errMalformed
	}
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return h, errMalformed
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, errMalformed
	}
	if h.Crit != nil || !slices.Contains(allowed, h.Alg) {
		return h, errMalformed
	}
	if sig == "" {
		return h, errMalformed
	}
	return h, nil
}

func isB64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
