package refserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// requestState (MRTR, SEC-07).
//
// A state token is  base64url(payload) "." base64url(tag)  (no padding):
//
//	payload = version(1) | expiry unix seconds (8, big endian) | round (uvarint) | data
//	tag     = HMAC-SHA256(key, domain | lp(method) | lp(name) | sha256(canonical arguments) | lp(principal) | payload)
//
// where lp(x) is uvarint(len(x)) followed by x. The tag binds the token to
// the request that produced it (method, tool or prompt name and a digest of
// the arguments), to the authenticated principal when the transport supplies
// one that has a stable string form, and to an expiry. Only the payload
// travels readable (base64 is not encryption); nothing secret goes into it.
// Verification compares tags in constant time (hmac.Equal) and is done
// before the payload is interpreted.

const (
	stateVersion  = 1
	stateTTL      = 10 * time.Minute
	stateMaxLen   = 4 << 10 // longest token accepted, in bytes
	stateMinKey   = 16
	stateDomain   = "mcpwire/refserver/requestState/v1\x00"
	stateTagBytes = sha256.Size
)

// processKey is the HMAC key used when Config.StateKey is nil: random,
// shared by every server of this process, so that replicas built in one
// process accept each other's states.
var processKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("refserver: cannot read random state key: " + err.Error())
	}
	return k
})

// signer mints and verifies requestState tokens. keys[0] signs; every key
// verifies (a fleet rotating its keys, E5).
type signer struct {
	keys [][]byte
	now  func() time.Time
	ttl  time.Duration
}

// stateData is the verified content of a requestState.
type stateData struct {
	round uint64
	data  string
}

// errBadState is the -32602 answer to a requestState that fails
// verification (tampered, foreign, expired or malformed). One message for
// every cause, so the answer tells an attacker nothing about which check
// failed; the cause goes to the debug log.
var errBadState = codec.NewError(codec.CodeInvalidParams, "Invalid params: requestState failed verification")

// binding returns the request-specific part of the MAC input.
func binding(c *engine.Call) ([]byte, error) {
	digest, err := argsDigest(c.Arguments())
	if err != nil {
		return nil, err
	}
	var b []byte
	b = appendLP(b, c.Method())
	b = appendLP(b, c.Name())
	b = append(b, digest[:]...)
	b = appendLP(b, principalString(c.Principal()))
	return b, nil
}

// principalString returns a stable string form of the principal, or "" when
// there is none we can rely on (nil, or a type without a string form).
func principalString(p any) string {
	switch v := p.(type) {
	case nil:
		return ""
	case string:
		return "s:" + v
	case fmt.Stringer:
		return "t:" + v.String()
	default:
		return ""
	}
}

func appendLP(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// argsDigest hashes the arguments in a canonical form (object members
// sorted, insignificant whitespace dropped), so that a client that
// re-serialises the same arguments on the retry still matches. Absent
// arguments hash like {}.
func argsDigest(raw []byte) ([sha256.Size]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return [sha256.Size]byte{}, err
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(canon), nil
}

func tag(key, bind, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(stateDomain))
	m.Write(bind)
	m.Write(payload)
	return m.Sum(nil)
}

// mint returns a requestState for call c at the given round.
func (s *signer) mint(c *engine.Call, round uint64, data string) (string, error) {
	bind, err := binding(c)
	if err != nil {
		return "", err
	}
	payload := make([]byte, 0, 1+8+binary.MaxVarintLen64+len(data))
	payload = append(payload, stateVersion)
	payload = binary.BigEndian.AppendUint64(payload, uint64(s.now().Add(s.ttl).Unix()))
	payload = binary.AppendUvarint(payload, round)
	payload = append(payload, data...)
	enc := base64.RawURLEncoding
	var sb strings.Builder
	sb.Grow(enc.EncodedLen(len(payload)) + 1 + enc.EncodedLen(stateTagBytes))
	sb.WriteString(enc.EncodeToString(payload))
	sb.WriteByte('.')
	sb.WriteString(enc.EncodeToString(tag(s.keys[0], bind, payload)))
	return sb.String(), nil
}

var (
	errStateFormat  = errors.New("malformed token")
	errStateTag     = errors.New("integrity check failed")
	errStateExpired = errors.New("expired")
	errStateVersion = errors.New("unknown version")
)

// verify checks token against call c and returns its content.
func (s *signer) verify(c *engine.Call, token string) (stateData, error) {
	if len(token) == 0 || len(token) > stateMaxLen {
		return stateData{}, errStateFormat
	}
	dot := strings.IndexByte(token, '.')
	if dot < 0 {
		return stateData{}, errStateFormat
	}
	enc := base64.RawURLEncoding.Strict()
	payload, err := enc.DecodeString(token[:dot])
	if err != nil {
		return stateData{}, errStateFormat
	}
	got, err := enc.DecodeString(token[dot+1:])
	if err != nil || len(got) != stateTagBytes {
		return stateData{}, errStateFormat
	}
	bind, err := binding(c)
	if err != nil {
		return stateData{}, errStateFormat
	}
	ok := false
	for _, k := range s.keys {
		if hmac.Equal(got, tag(k, bind, payload)) {
			ok = true
			break
		}
	}
	if !ok {
		return stateData{}, errStateTag
	}
	// Authentic from here on: the payload was written by mint.
	if len(payload) < 1+8+1 || payload[0] != stateVersion {
		return stateData{}, errStateVersion
	}
	exp := int64(binary.BigEndian.Uint64(payload[1:9]))
	if !s.now().Before(time.Unix(exp, 0)) {
		return stateData{}, errStateExpired
	}
	round, n := binary.Uvarint(payload[9:])
	if n <= 0 {
		return stateData{}, errStateFormat
	}
	return stateData{round: round, data: string(payload[9+n:])}, nil
}
