package codec

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// keyCase is how TestKeyTableReaders puts one recognised key in a message
// and reads it back from the Envelope.
type keyCase struct {
	value string                                  // the member's raw value
	field func(e *Envelope) (raw []byte, ok bool) // what Peek recorded; raw nil when Peek keeps only a flag
}

func strField(s Str) ([]byte, bool) {
	if !s.Present {
		return nil, false
	}
	return []byte(`"` + string(s.Raw) + `"`), true
}

func spanField(b []byte) ([]byte, bool) { return b, b != nil }

// keyCases has an entry for every key of keyNames: a key added to the
// table without one fails TestKeyTableReaders.
var keyCases = map[int]keyCase{
	keyJSONRPC: {`"2.0"`, func(e *Envelope) ([]byte, bool) { return nil, true }}, // Peek fails without it
	keyID:      {`7`, func(e *Envelope) ([]byte, bool) { return spanField(e.ID) }},
	keyMethod:  {`"m"`, func(e *Envelope) ([]byte, bool) { return strField(e.Method) }},
	keyParams:  {`{"p":1}`, func(e *Envelope) ([]byte, bool) { return spanField(e.Params) }},
	keyResult:  {`{"r":1}`, func(e *Envelope) ([]byte, bool) { return nil, e.HasResult }},
	keyError:   {`{"code":1}`, func(e *Envelope) ([]byte, bool) { return nil, e.HasError }},

	keyName:      {`"n"`, func(e *Envelope) ([]byte, bool) { return strField(e.Name) }},
	keyURI:       {`"file:///u"`, func(e *Envelope) ([]byte, bool) { return strField(e.URI) }},
	keyArguments: {`{"a":[1,{"b":null}]}`, func(e *Envelope) ([]byte, bool) { return spanField(e.Arguments) }},
	keyMeta:      {`{"x":1}`, func(e *Envelope) ([]byte, bool) { return spanField(e.Meta) }},
	keyRequestID: {`5`, func(e *Envelope) ([]byte, bool) { return spanField(e.RequestID) }},

	keyProtocolVersion:    {`"2026-07-28"`, func(e *Envelope) ([]byte, bool) { return strField(e.ProtocolVersion) }},
	keyClientInfo:         {`{"name":"c"}`, func(e *Envelope) ([]byte, bool) { return spanField(e.ClientInfo) }},
	keyClientCapabilities: {`{"c":{}}`, func(e *Envelope) ([]byte, bool) { return spanField(e.ClientCapabilities) }},
	keyLogLevel:           {`"debug"`, func(e *Envelope) ([]byte, bool) { return strField(e.LogLevel) }},
	keyProgressToken:      {`"t"`, func(e *Envelope) ([]byte, bool) { return spanField(e.ProgressToken) }},
}

// keyMessage is a valid message with the member `name: value` at the level
// of key k, name given as it appears on the wire (quotes included), and the
// path of the object that holds it.
func keyMessage(k int, name, value string) ([]byte, []string) {
	member := name + ":" + value
	switch keyNames[k].level {
	case levelTop:
		// A request, or a response for result and error, without the
		// member under test.
		base := []int{keyJSONRPC, keyID, keyMethod}
		if k == keyResult || k == keyError {
			base = base[:2]
		}
		var m []string
		for _, n := range base {
			if n != k {
				m = append(m, fmt.Sprintf("%q:%s", keyNames[n].name, keyCases[n].value))
			}
		}
		return []byte("{" + strings.Join(append(m, member), ",") + "}"), nil
	case levelParams:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"z":0,` + member + `}}`), []string{"params"}
	default:
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"z":0,` + member + `}}}`), []string{"params", "_meta"}
	}
}

// caseVariant flips the case of the first letter of name after its
// namespace ("Method", "_Meta", "io.modelcontextprotocol/ProtocolVersion").
func caseVariant(name string) string {
	b := []byte(name)
	for i := strings.LastIndexByte(name, '/') + 1; i < len(b); i++ {
		if c := b[i] | 0x20; c >= 'a' && c <= 'z' {
			b[i] ^= 0x20
			break
		}
	}
	return string(b)
}

// TestKeyTableReaders checks that the three readers of the package agree
// about every name of the key table (keyNames): Peek finds it (by knownKey
// for the plain spelling, by classify for an escaped one) and records what
// LookupPath and LookupMembers find under the same name, the skipper
// accepts the message, and a case variant is what A10 and META-02 say
// (ErrDuplicateKey at the top and params levels; an unknown key in _meta),
// which LookupPath, matching exactly, does not find.
func TestKeyTableReaders(t *testing.T) {
	for k, kn := range keyNames {
		if kn.name == "" {
			continue
		}
		c, ok := keyCases[k]
		if !ok {
			t.Errorf("key %q: no keyCase; add one", kn.name)
			continue
		}
		name := kn.name
		escaped := fmt.Sprintf(`"\u%04x%s"`, name[0], name[1:])
		variant := caseVariant(name)

		for _, spelling := range []string{`"` + name + `"`, escaped} {
			msg, path := keyMessage(k, spelling, c.value)
			var env Envelope
			if err := Peek(msg, &env); err != nil {
				t.Errorf("%s: Peek: %v", msg, err)
				continue
			}
			got, present := c.field(&env)
			if !present || got != nil && string(got) != c.value {
				t.Errorf("%s: Peek recorded %q (present %v), want %s", msg, got, present, c.value)
			}
			if v, ok := LookupPath(msg, append(path, name)...); !ok || string(v) != c.value {
				t.Errorf("%s: LookupPath = %q %v, want %s", msg, v, ok, c.value)
			}
			obj := msg
			if len(path) > 0 {
				obj, _ = LookupPath(msg, path...)
			}
			vals := make([][]byte, 1)
			if err := LookupMembers(obj, []string{name}, vals); err != nil || string(vals[0]) != c.value {
				t.Errorf("%s: LookupMembers = %q %v, want %s", msg, vals[0], err, c.value)
			}
			sk := skipper{max: DefaultMaxDepth}
			if e := sk.skip(msg, 0, 0); e != len(msg) {
				t.Errorf("%s: skip = %d, want %d", msg, e, len(msg))
			}
		}

		// knownKey matches the plain spelling, and classify agrees with
		// it. Its index is just past the opening quote, as in a message.
		plain := []byte(`{"x":1,"` + name + `":0}      `)
		if got, e := knownKey(plain, 8, kn.level); got != k || e != 8+len(name)+1 {
			t.Errorf("knownKey(%q) = %d, %d; want %d, %d", name, got, e, k, 8+len(name)+1)
		}
		if got := classify([]byte(name), 0, kn.level); got != k {
			t.Errorf("classify(%q) = %d, want %d", name, got, k)
		}

		// A case variant.
		msg, path := keyMessage(k, `"`+variant+`"`, c.value)
		var env Envelope
		err := Peek(msg, &env)
		switch {
		case kn.level == levelMeta:
			if _, present := c.field(&env); err != nil || present {
				t.Errorf("%s: Peek = %v, field present %v; want an unknown _meta key", msg, err, present)
			}
		case err != ErrDuplicateKey:
			t.Errorf("%s: Peek = %v, want ErrDuplicateKey", msg, err)
		}
		if v, ok := LookupPath(msg, append(path, name)...); ok {
			t.Errorf("%s: LookupPath(%q) found the variant: %q", msg, name, v)
		}
		if got, e := knownKey([]byte(`{"x":1,"`+variant+`":0}      `), 8, kn.level); e >= 0 {
			t.Errorf("knownKey(%q) = %d, %d; want no match", variant, got, e)
		}
		want := keyFold
		if kn.level == levelMeta {
			want = keyUnknown
		}
		if got := classify([]byte(variant), 0, kn.level); got != want {
			t.Errorf("classify(%q) = %d, want %d", variant, got, want)
		}
	}
}

// TestKeyTableDerived checks the structures derived from keyNames: every
// name is in its level's keyFirst chain, the names of a level are told
// apart, and the guesses follow the table order.
func TestKeyTableDerived(t *testing.T) {
	for k, kn := range keyNames {
		if kn.name == "" {
			if k != keyUnknown && k != keyFold {
				t.Errorf("key %d has no name", k)
			}
			continue
		}
		found := false
		for f := keyFirst[kn.level][kn.name[0]&31]; f != 0; f = keys[f&31].next {
			if int(uint8(f)) == k {
				found = int(f>>8) == len(kn.name)+1
			}
		}
		if !found {
			t.Errorf("%q is not in keyFirst with its length", kn.name)
		}
		if m := keys[k]; !bytes.Equal([]byte(kn.name), keyBytes[k]) || int(m.n) != len(kn.name)+1 {
			t.Errorf("%q: keys/keyBytes out of step with keyNames", kn.name)
		}
	}
	for l := levelTop; l <= levelMeta; l++ {
		var order []string
		for k := keyLead[l]; k != 0; k = keys[k].after {
			if keyNames[k].level != l {
				t.Errorf("level %d: guess %q is of level %d", l, keyNames[k].name, keyNames[k].level)
			}
			order = append(order, keyNames[k].name)
		}
		var want []string
		for _, kn := range keyNames {
			if kn.level == l {
				want = append(want, kn.name)
			}
		}
		if strings.Join(order, ",") != strings.Join(want, ",") {
			t.Errorf("level %d guesses %v, want the table order %v", l, order, want)
		}
	}
}
