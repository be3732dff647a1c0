package engine

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// plainOpen is an open flat schema with a property of every type the
// flat check knows, and one of any type.
const plainOpen = `{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},` +
	`"b":{"type":"boolean"},"z":{"type":"null"},"a":{},"o":{"type":"object"},"l":{"type":"array"},` +
	`"middle":{"type":"integer"},"eight_ch":{"type":"string"},"a_longer_name":{"type":"boolean"}},"required":["s","i"]}`

// plainSeeds are arguments objects for FuzzFlatPlain: recorded by Peek
// (flat, compact, plain) or not, passing or failing, open or closed.
var plainSeeds = []string{
	`{"s":"x","i":1}`, `{"s":"hello world","i":0,"n":12,"b":true,"z":null,"a":"q"}`, `{"i":1}`, `{"s":1,"i":"1"}`,
	`{"s":"x","i":1,"s":"y"}`, `{"s":"x","i":1,"x":2}`, `{"s":"x","i":1.5}`, `{"s":"x","i":1e2}`, `{"s":"x","i":-1}`,
	`{"s":"\u00e9","i":1}`, `{"s":"x", "i":1}`, `{"s":"x","i":1,"o":{}}`, `{"s":"x","i":1,"l":[]}`, `{"s":"x","i":1,"o":1}`,
	`{}`, `{"a":null,"b":false,"n":0,"z":1}`, `{"s":"x","i":1,"n":2,"b":true,"z":null}`, `{"t":"y","s":"x"}`,
	`{"b":true,"f":1.5,"i":3,"j":4,"s":"x","t":"y"}`, `{"s":"x","t":"y","i":3,"b":false}`, `{"s":"\u0078","i":1}`,
	`{"S":"x","i":1}`, `{"s":"x","i":01}`, `{"s":"tab\tx","i":1}`, `{"s":"x\u007f","i":1}`,
	`{"s":"x","i":1,"middle":2,"eight_ch":"y","a_longer_name":true}`, `{"middle":"2","eight_ch":1,"a_longer_name":0}`,
	`{"s":"x","i":1,"middl":2,"eight_c":"y","a_longer_nam":true}`, `{"":1,"s":"","i":0}`,
}

// FuzzFlatPlain: the flat check on the members Peek recorded
// (flatSchema.checkPlain, through checkFrom with the envelope) gives
// exactly what the check that scans the arguments gives — verdict,
// message, whether it decided, every value — for an open and for a closed
// (typed, inferred) schema; and the typed decode that trusts the recorded
// strings to be plain (decodeScanned with plain) gives the Go value the
// checked decode gives.
func FuzzFlatPlain(f *testing.F) {
	for _, s := range plainSeeds {
		f.Add(s)
	}
	open, err := compileArgSchema([]byte(plainOpen))
	if err != nil || open.flat == nil {
		f.Fatalf("not flat: %v", err)
	}
	typ := reflect.TypeFor[identityArgs]()
	fc := newFlatCodec(typ)
	sch, err := schemaFor(typ, schemaInput)
	if err != nil {
		f.Fatal(err)
	}
	closed, err := compileArgSchema(sch)
	if err != nil || closed.flat == nil || !closed.flat.closed || fc == nil {
		f.Fatalf("not flat and closed: %v", err)
	}
	m := fc.mapFrom(closed.flat)
	f.Fuzz(func(t *testing.T, args string) {
		// _meta after the arguments (the fixture's order), and the
		// arguments ending the message (Peek's recordTail).
		for _, msg := range [][]byte{
			[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + args + `,"_meta":{"progressToken":1}}}`),
			[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"t","arguments":` + args + `}}`),
		} {
			plainChecks(t, msg, args, open, closed, fc, m)
		}
	})
}

// plainChecks is FuzzFlatPlain's comparison on one message.
func plainChecks(t *testing.T, msg []byte, args string, open, closed *argSchema, fc *flatCodec, m *flatMap) {
	var env codec.Envelope
	if codec.Peek(msg, &env) != nil || !argsObject(env.Arguments) {
		return
	}
	for _, a := range []*argSchema{open, closed} {
		var got, want [maxFlat][]byte
		ge, gok := a.flat.checkFrom(env.Arguments, &env, &got)
		we, wok := a.flat.checkFrom(env.Arguments, nil, &want)
		if gok != wok || (ge == nil) != (we == nil) || (ge != nil && ge.Error() != we.Error()) {
			t.Fatalf("%s: from the envelope %v %v, scanned %v %v", args, gok, ge, wok, we)
		}
		if !gok {
			continue
		}
		for i := range a.flat.names {
			if (got[i] == nil) != (want[i] == nil) || !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: %q from the envelope %q, scanned %q", args, a.flat.names[i], got[i], want[i])
			}
		}
		if a != closed || ge != nil {
			continue
		}
		var fast, slow identityArgs
		fok := fc.decodeScanned(m, &got, unsafe.Pointer(&fast), &strChunk{}, env.PlainArguments() >= 0)
		sok := fc.decodeScanned(m, &want, unsafe.Pointer(&slow), &strChunk{}, false)
		if fok != sok || (fok && fast != slow) {
			t.Fatalf("%s: trusting the recorded strings %v %+v, checking them %v %+v", args, fok, fast, sok, slow)
		}
	}
}
