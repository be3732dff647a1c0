package mrtr

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// Defaults for Config fields; each applies when the field is zero.
const (
	// DefaultTTL is how long a state stays valid: long enough for a user
	// to fill a form, short enough that a leaked state soon stops working.
	DefaultTTL = 10 * time.Minute
	// DefaultMaxData bounds the author's bytes carried in one state. A
	// state travels in the result and again in every retry; what is larger
	// belongs in a store (package state) under a handle the state carries.
	DefaultMaxData = 4 << 10
)

// Config configures a Signer. The zero value is usable: a random key for
// this process, DefaultTTL, DefaultMaxData. Its limits follow the
// repository's rule: 0 selects the Default* constant, negative means no
// limit (unsafe, as each field says).
type Config struct {
	// Keys are the HMAC-SHA256 keys, each at least MinKeyBytes: the first
	// signs, every one verifies, so a fleet rotates by deploying
	// [new, old] and later [new] (see LoadKeys for the file format that
	// `mcpwire serve --state-key-file` reads). Replicas that share the
	// keys accept each other's states (MRTR-09: any replica may serve a
	// retry). Nil: one random key per process, shared by every Signer of
	// the process that has none; states then do not survive a restart and
	// other processes refuse them. An empty non-nil list is an error.
	Keys [][]byte
	// TTL is how long a state verifies after it was signed. Default
	// DefaultTTL (10 minutes). Negative: states never expire (unsafe: a
	// leaked state then stays valid until its key is retired). Replicas
	// compare the expiry with their own clocks, so skew between them
	// shortens or lengthens it by as much.
	TTL time.Duration
	// MaxData bounds the author's data in one state, in bytes; Sign
	// refuses more, and Verify refuses a token longer than a state with
	// that much data, before decoding it. Default DefaultMaxData (4 KiB).
	// Negative: no bound of the signer's own (unsafe: a peer can then
	// make the signer decode and MAC a token as large as the transport's
	// message limit lets through).
	MaxData int
	// Principal turns Call.Principal into the stable identity a state is
	// bound to. Default DefaultPrincipal. Return an error for a principal
	// that has no such identity: Sign then fails rather than bind the
	// state to nothing.
	Principal func(p any) (string, error)
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// DefaultPrincipal is the default Config.Principal: nil (unauthenticated)
// is the anonymous identity, and so is a typed nil (a nil pointer); a
// string is itself; a fmt.Stringer is its String(). The three never
// collide (each gets its own prefix). A Stringer whose String is "" and any
// other type are errors: binding every such principal to one identity
// would let one caller's state serve another.
func DefaultPrincipal(p any) (string, error) {
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return "n:", nil
	}
	switch v := p.(type) {
	case nil:
		return "n:", nil
	case string:
		return "s:" + v, nil
	case fmt.Stringer:
		if id := v.String(); id != "" {
			return "t:" + id, nil
		}
		return "", fmt.Errorf("mrtr: principal of type %T has an empty String (no identity): set Config.Principal", p)
	}
	return "", fmt.Errorf("mrtr: principal of type %T has no stable identity: set Config.Principal", p)
}

// Stats counts what a Signer did; every refusal reason has its own
// counter. Export them with observe/metrics (Collector.AddStats("mrtr",
// signer.Stats())) as mcpwire_mrtr_*_total.
type Stats struct {
	Signed         atomic.Uint64 // states signed
	Verified       atomic.Uint64 // states that passed every check
	Malformed      atomic.Uint64 // refused: not a string, bad length, encoding or format (ErrStateMalformed)
	ForeignKey     atomic.Uint64 // refused: signed with a key not held (ErrStateForeignKey)
	Tampered       atomic.Uint64 // refused: integrity tag mismatch (ErrStateTampered)
	Expired        atomic.Uint64 // refused: past its expiry (ErrStateExpired)
	WrongPrincipal atomic.Uint64 // refused: issued to another principal (ErrStateWrongPrincipal)
	WrongTarget    atomic.Uint64 // refused: issued for another method, tool, prompt or resource (ErrStateWrongTarget)
	WrongArguments atomic.Uint64 // refused: issued for other arguments (ErrStateWrongArguments)
}

// Binding is what a state is bound to: the request that receives it.
// BindingOf builds it from a Call; Seal and Open take one directly, for a
// handler that is not an engine handler (and for tests).
type Binding struct {
	// Principal is what the transport's authentication established
	// (Call.Principal); Config.Principal turns it into an identity.
	Principal any
	// Method is "tools/call", "prompts/get" or "resources/read".
	Method string
	// Target is the tool or prompt name, or the resource URI.
	Target string
	// Arguments is the raw params.arguments; nil means none, the same as
	// {} (see the digest's rules in canonical.go).
	Arguments []byte
}

// BindingOf returns the binding of the request c: its principal, method,
// target (the URI for resources/read, the name otherwise) and arguments.
func BindingOf(c *engine.Call) Binding {
	b := Binding{Principal: c.Principal(), Method: c.Method(), Arguments: c.Arguments()}
	if b.Method == "resources/read" {
		b.Target = c.URI()
	} else {
		b.Target = c.Name()
	}
	return b
}

// A state token is two base64url parts without padding:
//
//	token   = base64url(payload) "." base64url(tag)
//	payload = version (1 byte, 1) | key id (4) | expiry (8) |
//	          principal (16) | target (16) | arguments (16) | data
//	tag     = HMAC-SHA256(key, "mcpwire/mrtr/1 state\x00" | payload)
//
// expiry is Unix milliseconds, big endian (math.MaxInt64: never). The key
// id and the three bindings are HMAC-SHA256 under the same key, truncated:
//
//	key id    = HMAC(key, "mcpwire/mrtr/1 key id\x00")[:4]
//	principal = HMAC(key, "mcpwire/mrtr/1 principal\x00" | identity)[:16]
//	target    = HMAC(key, "mcpwire/mrtr/1 target\x00" | lp(method) | lp(target))[:16]
//	arguments = HMAC(key, "mcpwire/mrtr/1 arguments\x00" | SHA-256(canonical arguments))[:16]
//
// where lp(x) is uvarint(len(x)) then x. The tag makes the payload
// authentic; the bindings, being keyed, say nothing about the principal or
// the arguments to whoever reads the token, and let Open tell which part
// of the request differs once the payload is known to be genuine. The key
// id picks the key, so a state signed elsewhere is told from a tampered
// one. data travels readable (base64 is not encryption): no secrets.
const (
	stateVersion = 1
	keyIDLen     = 4
	bindLen      = 16
	tagLen       = sha256.Size
	headerLen    = 1 + keyIDLen + 8 + 3*bindLen

	domainState     = "mcpwire/mrtr/1 state\x00"
	domainKeyID     = "mcpwire/mrtr/1 key id\x00"
	domainPrincipal = "mcpwire/mrtr/1 principal\x00"
	domainTarget    = "mcpwire/mrtr/1 target\x00"
	domainArguments = "mcpwire/mrtr/1 arguments\x00"
)

var b64 = base64.RawURLEncoding.Strict()

// processKey is the key of every Signer configured without keys.
var processKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read does not fail (Go ≥ 1.24)
	return k
})

type signKey struct {
	key []byte
	id  [keyIDLen]byte
}

// Signer signs and verifies requestState (SEC-07). It is safe for
// concurrent use; build one per server (or per fleet configuration) and
// share it between handlers.
type Signer struct {
	keys      []signKey // [0] signs
	ttl       time.Duration
	maxData   int // -1: none
	maxToken  int // -1: none
	principal func(any) (string, error)
	now       func() time.Time
	stats     Stats
}

// NewSigner returns a Signer for cfg; it copies the keys.
func NewSigner(cfg Config) (*Signer, error) {
	keys := cfg.Keys
	switch {
	case keys == nil:
		keys = [][]byte{processKey()}
	case len(keys) == 0:
		return nil, errors.New("mrtr: Config.Keys is empty (nil selects a random key)")
	}
	s := &Signer{ttl: cfg.TTL, maxData: cfg.MaxData, principal: cfg.Principal, now: cfg.Now}
	for i, k := range keys {
		if len(k) < MinKeyBytes {
			return nil, fmt.Errorf("mrtr: key %d: %d bytes, want at least %d", i+1, len(k), MinKeyBytes)
		}
		sk := signKey{key: append([]byte(nil), k...)}
		copy(sk.id[:], mac(sk.key, domainKeyID))
		s.keys = append(s.keys, sk)
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	switch {
	case s.maxData == 0:
		s.maxData = DefaultMaxData
	case s.maxData < 0:
		s.maxData = -1
	}
	s.maxToken = -1
	if s.maxData >= 0 {
		s.maxToken = b64.EncodedLen(headerLen+s.maxData) + 1 + b64.EncodedLen(tagLen)
	}
	if s.principal == nil {
		s.principal = DefaultPrincipal
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Stats returns the signer's counters.
func (s *Signer) Stats() *Stats { return &s.stats }

// mac returns HMAC-SHA256(key, parts...).
func mac(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// bindings computes the three bound values of b under key k, into dst
// (3*bindLen bytes).
func (s *Signer) bindings(dst []byte, k []byte, b Binding) error {
	id, err := s.principal(b.Principal)
	if err != nil {
		return err
	}
	digest, err := argsDigest(b.Arguments)
	if err != nil {
		return err
	}
	copy(dst[0:bindLen], mac(k, domainPrincipal, id))
	var lp []byte
	lp = binary.AppendUvarint(lp, uint64(len(b.Method)))
	lp = append(lp, b.Method...)
	lp = binary.AppendUvarint(lp, uint64(len(b.Target)))
	lp = append(lp, b.Target...)
	copy(dst[bindLen:2*bindLen], mac(k, domainTarget, string(lp)))
	copy(dst[2*bindLen:3*bindLen], mac(k, domainArguments, string(digest[:])))
	return nil
}

// Seal returns a state for binding b carrying data (which may be nil).
// Errors are the author's to fix: data over Config.MaxData, a principal
// without an identity, arguments that are not JSON.
func (s *Signer) Seal(b Binding, data []byte) (string, error) {
	if s.maxData >= 0 && len(data) > s.maxData {
		return "", fmt.Errorf("mrtr: state data of %d bytes exceeds Config.MaxData (%d)", len(data), s.maxData)
	}
	k := s.keys[0]
	payload := make([]byte, headerLen, headerLen+len(data))
	payload[0] = stateVersion
	copy(payload[1:], k.id[:])
	exp := int64(math.MaxInt64)
	if s.ttl > 0 {
		exp = s.now().Add(s.ttl).UnixMilli()
	}
	binary.BigEndian.PutUint64(payload[1+keyIDLen:], uint64(exp))
	if err := s.bindings(payload[1+keyIDLen+8:headerLen], k.key, b); err != nil {
		return "", err
	}
	payload = append(payload, data...)
	tag := mac(k.key, domainState, string(payload))
	var sb strings.Builder
	sb.Grow(b64.EncodedLen(len(payload)) + 1 + b64.EncodedLen(tagLen))
	sb.WriteString(b64.EncodeToString(payload))
	sb.WriteByte('.')
	sb.WriteString(b64.EncodeToString(tag))
	s.stats.Signed.Add(1)
	return sb.String(), nil
}

// Open verifies state against binding b and returns the data it carries
// (a new slice). A state that fails is refused with an *Error (-32602)
// whose Reason says which check failed, in this order: malformed, foreign
// key, tampered, expired, wrong principal, wrong target, wrong arguments;
// each is counted in Stats. Tags are compared in constant time. Nothing
// of the payload is interpreted before its tag has been checked, but the
// version byte and the key id, which only select how to check it.
func (s *Signer) Open(b Binding, state string) ([]byte, error) {
	if state == "" || s.maxToken >= 0 && len(state) > s.maxToken {
		return nil, s.refuse(errStateMalformed)
	}
	dot := strings.IndexByte(state, '.')
	if dot < 0 || b64.DecodedLen(len(state)-dot-1) != tagLen {
		return nil, s.refuse(errStateMalformed)
	}
	payload, err := b64.DecodeString(state[:dot])
	if err != nil || len(payload) < headerLen || payload[0] != stateVersion {
		return nil, s.refuse(errStateMalformed)
	}
	tag, err := b64.DecodeString(state[dot+1:])
	if err != nil || len(tag) != tagLen {
		return nil, s.refuse(errStateMalformed)
	}
	id := payload[1 : 1+keyIDLen]
	found := false
	for _, k := range s.keys {
		if string(k.id[:]) != string(id) {
			continue
		}
		found = true
		if !hmac.Equal(tag, mac(k.key, domainState, string(payload))) {
			continue // a second key with the same id may still match
		}
		// Authentic from here on: Seal wrote this payload.
		exp := int64(binary.BigEndian.Uint64(payload[1+keyIDLen:]))
		if s.now().UnixMilli() >= exp {
			return nil, s.refuse(errStateExpired)
		}
		var want [3 * bindLen]byte
		if err := s.bindings(want[:], k.key, b); err != nil {
			// No identity for this principal, or arguments that do not
			// decode: the state cannot be this request's.
			if errors.Is(err, errArguments) {
				return nil, s.refuse(errStateWrongArguments)
			}
			return nil, s.refuse(errStateWrongPrincipal)
		}
		got := payload[1+keyIDLen+8 : headerLen]
		switch {
		case !hmac.Equal(got[:bindLen], want[:bindLen]):
			return nil, s.refuse(errStateWrongPrincipal)
		case !hmac.Equal(got[bindLen:2*bindLen], want[bindLen:2*bindLen]):
			return nil, s.refuse(wrongTarget(b.Method))
		case !hmac.Equal(got[2*bindLen:], want[2*bindLen:]):
			return nil, s.refuse(errStateWrongArguments)
		}
		s.stats.Verified.Add(1)
		return append([]byte(nil), payload[headerLen:]...), nil
	}
	if !found {
		return nil, s.refuse(errStateForeignKey)
	}
	return nil, s.refuse(errStateTampered)
}

// refuse counts e's reason and returns e.
func (s *Signer) refuse(e *Error) *Error {
	var c *atomic.Uint64
	switch e.Reason {
	case ErrStateMalformed:
		c = &s.stats.Malformed
	case ErrStateForeignKey:
		c = &s.stats.ForeignKey
	case ErrStateTampered:
		c = &s.stats.Tampered
	case ErrStateExpired:
		c = &s.stats.Expired
	case ErrStateWrongPrincipal:
		c = &s.stats.WrongPrincipal
	case ErrStateWrongTarget:
		c = &s.stats.WrongTarget
	case ErrStateWrongArguments:
		c = &s.stats.WrongArguments
	}
	c.Add(1)
	return e
}

// Sign returns a state bound to the request c (BindingOf) carrying data.
func (s *Signer) Sign(c *engine.Call, data []byte) (string, error) {
	return s.Seal(BindingOf(c), data)
}

// Verify reads params.requestState of c (MRTR-06) and verifies it
// against c. ok is false, with no error, when the request carries none (a
// first request, or a retry that starts over). A requestState that is not
// a JSON string, or fails a check, is an *Error (-32602) to return as it
// is; the data is a new slice the handler may keep.
func (s *Signer) Verify(c *engine.Call) (data []byte, ok bool, err error) {
	if _, present := c.ParamRaw("requestState"); !present {
		return nil, false, nil
	}
	str, isString := codec.LookupString(c.Params(), "requestState")
	if !isString {
		return nil, false, s.refuse(errStateMalformed)
	}
	// Bound the unescaping by the longest token accepted: an escaped
	// string is at least as long as its value.
	if s.maxToken >= 0 && len(str.Raw) > 6*s.maxToken {
		return nil, false, s.refuse(errStateMalformed)
	}
	data, err = s.Open(BindingOf(c), str.String())
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// Ask answers c with an InputRequiredResult (MRTR-01) carrying reqs and a
// new state bound to c that carries data: the retry brings both back, and
// Verify returns data once the state checks out. reqs may be empty to ask
// only for a retry with the state (MRTR-05). Only tools/call, prompts/get
// and resources/read may answer this way (MRTR-02); ask only for what the
// request's clientCapabilities allow (MRTR-04, see Allowed).
func (s *Signer) Ask(c *engine.Call, reqs map[string]mcp.InputRequest, data []byte) error {
	st, err := s.Sign(c, data)
	if err != nil {
		return err
	}
	return c.InputRequired(mcp.InputRequired{InputRequests: reqs, RequestState: st})
}
