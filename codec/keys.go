package codec

import (
	"bytes"
	"encoding/binary"
)

// Object levels Peek inspects.
const (
	levelTop    = 1 // the message object
	levelParams = 2 // params
	levelMeta   = 3 // params._meta
)

// Member keys at the three inspected levels. keyFold marks a name that is
// not a recognised member but case-folds to one (A10).
const (
	keyUnknown = iota
	keyFold

	keyJSONRPC
	keyID
	keyMethod
	keyParams
	keyResult
	keyError

	keyName
	keyArguments
	keyMeta
	keyRequestID
	keyURI

	// Each level's keys are in the order they usually come (EXAMPLES.md,
	// the standard fixture: a tools/call's name, arguments, _meta; its
	// _meta's progressToken after the namespaced keys): the object loop
	// guesses that order (keyMatch.after), and knownKey tries the
	// namespaced _meta keys, which share a keyFirst slot, in it. A key out
	// of that order (uri, logLevel) costs a call to knownKey.
	keyProtocolVersion
	keyClientInfo
	keyClientCapabilities
	keyProgressToken
	keyLogLevel

	keyCount
)

// keyNames is the one table of the member names Peek recognises: the name
// of each key and the object level it is recognised at. Everything else
// that knows a name is derived from it (knownKey's words and guesses,
// classify and the case-fold check), so a key is added here and nowhere
// else. TestKeyTableReaders fails when Peek, the skipper, LookupPath and the
// table disagree about a name.
var keyNames = [keyCount]struct {
	name  string
	level int
}{
	keyJSONRPC: {"jsonrpc", levelTop},
	keyID:      {"id", levelTop},
	keyMethod:  {"method", levelTop},
	keyParams:  {"params", levelTop},
	keyResult:  {"result", levelTop},
	keyError:   {"error", levelTop},

	keyName:      {"name", levelParams},
	keyArguments: {"arguments", levelParams},
	keyMeta:      {"_meta", levelParams},
	keyRequestID: {"requestId", levelParams},
	keyURI:       {"uri", levelParams},

	keyProtocolVersion:    {MetaProtocolVersion, levelMeta},
	keyClientInfo:         {MetaClientInfo, levelMeta},
	keyClientCapabilities: {MetaClientCapabilities, levelMeta},
	keyProgressToken:      {MetaProgressToken, levelMeta},
	keyLogLevel:           {MetaLogLevel, levelMeta},
}

// keyMatch is what the object loop's guess and knownKey compare for one
// key, derived from keyNames. name+quote is the name followed by its
// closing quote, read as little-endian words; 64 bytes, so that indexing
// keys is a shift.
type keyMatch struct {
	first uint64    // bytes 0-7 of name+quote (names longer than 7)
	last  uint64    // the 8 bytes that end with name+quote, the bytes before it zero (a name+quote shorter than 8 is in the top bytes)
	lmask uint64    // the bytes of last that belong to name+quote
	mid   [4]uint64 // bytes 8-15, 16-23, … before the last word (names longer than 16)
	n     uint8     // len(name+quote)
	after uint8     // the key that usually follows this one (the next in keyNames at its level), or 0
	next  keySlot   // the next key of the same level and keyFirst slot, or 0
}

// keySlot is a key in its low byte and the length of its name+quote in its
// high byte: reading both at once keeps the end of a recognised name one
// table read away from the name's first bytes.
type keySlot uint16

// keyFirst[level][c&31] is the first key of that level whose name starts
// with byte c (or c with its ASCII case flipped: c&31 drops bit 0x20), and
// keys[k].next the following ones. The first byte alone tells every key
// of the top and params levels apart; the "io.modelcontextprotocol/" names
// share a slot, and the compare of their last word separates them.
var keyFirst, keys = func() (first [levelMeta + 1][32]keySlot, m [32]keyMatch) {
	for k := keyCount - 1; k >= 0; k-- {
		n := keyNames[k]
		if n.name == "" {
			continue
		}
		q := []byte(n.name + `"`)
		if len(q) > 8*(len(m[k].mid)+2) || len(q) > 16 && len(q) < 24 {
			panic("codec: key table: " + n.name + ": the object loop's guess and knownKey take names+quote of at most 16, or 24 to 48, bytes")
		}
		var buf [8 * (len(m[k].mid) + 1)]byte
		copy(buf[:], q)
		m[k].first = binary.LittleEndian.Uint64(buf[:])
		for j := range m[k].mid {
			m[k].mid[j] = binary.LittleEndian.Uint64(buf[8+8*j:])
		}
		m[k].n = uint8(len(q))
		var tail [8]byte
		copy(tail[max(0, 8-len(q)):], q[max(0, len(q)-8):])
		m[k].last = binary.LittleEndian.Uint64(tail[:])
		m[k].lmask = ^uint64(0) << (8 * max(0, 8-len(q)))
		c := n.name[0] & 31
		m[k].next = first[n.level][c]
		first[n.level][c] = keySlot(k) | keySlot(len(q))<<8
	}
	m[keyUnknown].last, m[keyUnknown].lmask = ^uint64(0), ^uint64(0) // never matches (see knownKey)
	for k := keyCount - 1; k >= 0; k-- {
		if l := keyNames[k].level; l != 0 {
			m[k].after = keyLead[l]
			keyLead[l] = uint8(k)
		}
	}
	return
}()

// keyLead[level] is the key that usually comes first at level: knownKey's
// first guess there.
var keyLead [levelMeta + 1]uint8

// knownKey is the fast path for member names: it compares b[i:] (just past
// a name's opening quote, so b[i-1] is that quote and i >= 1) with the
// recognised names of level that start with the same byte (keyFirst),
// each followed by its closing quote, and on a match returns the key and
// the index past the quote: a name that is exactly a recognised one needs
// no scan and no unescaping. Anything else returns -1, and the caller
// scans the name and asks classify (which also catches escaped spellings
// and case variants). The object loop tries its guess (the key that
// usually follows the last one, keyMatch.after) before it calls this,
// with the same compare written out.
//
// The compare loads only words inside b[:i+n] (n the length of
// name+quote): the last word first, which alone decides a name+quote of
// at most 8 bytes (the bytes before the name are masked out) and tells the
// namespaced _meta names apart; then the first word and those between.
// Row keyUnknown never matches: its last word would have to end in 0xff
// where b holds the opening quote.
func knownKey(b []byte, i int, level int) (int, int) {
	if uint(i) >= uint(len(b)) {
		return keyUnknown, -1
	}
	for f := keyFirst[level&3][b[i]&31]; f != 0; f = keys[f&31].next {
		m := &keys[f&31]
		n := int(m.n)
		e := i + n
		if e <= len(b) && e >= 8 && (word(b, e-8)^m.last)&m.lmask == 0 &&
			(n <= 8 || word(b, i) == m.first && (n <= 16 || word(b, i+8) == m.mid[0] && word(b, i+16) == m.mid[1] &&
				(n <= 32 || word(b, i+24) == m.mid[2] && (n <= 40 || word(b, i+32) == m.mid[3])))) {
			return int(uint8(f)), e
		}
	}
	return keyUnknown, -1
}

// classify maps the member name key (raw, between the quotes; fl its scan
// flags) at level to its key: a recognised name, keyUnknown, or keyFold for
// a name that only case-folds to a recognised one. Names are compared after
// unescaping, so "\u006dethod" is "method".
func classify(key []byte, fl uint8, level int) int {
	if fl != 0 {
		return classifySlow(key, fl, level)
	}
	if len(key) == 0 {
		return keyUnknown
	}
	for f := keyFirst[level&3][key[0]&31]; f != 0; f = keys[f&31].next {
		k := uint8(f)
		name := keyNames[k].name
		if len(key) != len(name) {
			continue
		}
		if string(key) == name {
			return int(k)
		}
		if level != levelMeta && equalFoldASCII(key, name) {
			return keyFold
		}
	}
	// _meta keys are open-ended (reverse-DNS prefixed): a case variant
	// such as "io.modelcontextprotocol/ProtocolVersion" is another key,
	// never the recognised one (META-02), so it is simply unknown.
	return keyUnknown
}

// equalFoldASCII reports whether the ASCII strings a and b (same length)
// are equal up to the case of letters, which for ASCII input is what
// Unicode simple folding gives.
func equalFoldASCII(a []byte, b string) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if x != y && (x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z') {
			return false
		}
	}
	return true
}

// maxFoldLen bounds the byte length of any case-fold variant of a recognised
// name: the only non-ASCII runes that fold to ASCII letters are U+017F (ſ, 2
// bytes) and U+212A (Kelvin sign, 3 bytes), so a variant is at most 3× the
// longest name (42 bytes).
const maxFoldLen = 3 * len(MetaClientCapabilities)

// classifySlow is classify for a name with escapes or non-ASCII bytes. An
// escaped name is unescaped first (one too long to be a variant is unknown);
// a non-ASCII one cannot be a recognised name, only fold to one ("paramſ",
// Kelvin sign), which Unicode simple folding decides.
func classifySlow(key []byte, fl uint8, level int) int {
	if fl&strEscaped != 0 {
		var buf [maxFoldLen]byte
		n, ok := unescapeBounded(buf[:], key)
		if !ok {
			return keyUnknown
		}
		u := buf[:n]
		for _, c := range u {
			if c >= 0x80 {
				return classifySlow(u, strNonASCII, level)
			}
		}
		return classify(u, 0, level)
	}
	if level == levelMeta {
		return keyUnknown
	}
	for k := range keyNames {
		n := keyNames[k].name
		// A variant is longer than the name: each folding rune takes 2 or
		// 3 bytes where the name has 1.
		if keyNames[k].level == level && len(key) > len(n) && len(key) <= 3*len(n) &&
			bytes.EqualFold(key, keyBytes[k]) {
			return keyFold
		}
	}
	return keyUnknown
}

// keyBytes holds the names of keyNames as byte slices for bytes.EqualFold.
var keyBytes = func() (t [keyCount][]byte) {
	for k, n := range keyNames {
		t[k] = []byte(n.name)
	}
	return
}()
