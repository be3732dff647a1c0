package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// identityArgs lists its members in the order of its schema, so its typed
// decode takes the in-place route (flatMap.identity), which FuzzFlatCodec's
// type does not reach.
type identityArgs struct {
	B bool    `json:"b"`
	F float64 `json:"f"`
	I int     `json:"i"`
	J int64   `json:"j,omitzero"`
	S string  `json:"s"`
	T string  `json:"t,omitempty"`
}

// FuzzFlatIdentity: the in-place typed decode of checked flat arguments
// agrees with sonic's decode of the same object, whenever both accept it.
func FuzzFlatIdentity(f *testing.F) {
	for _, s := range []string{`{"b":true,"f":1.5,"i":3,"j":4,"s":"x","t":"y"}`, `{"t":"y","s":"x"}`, `{"s":"\u00e9"}`,
		`{"s":"a","s":"b"}`, `{"\u0073":"a"}`, `{"s":"h\u00e9llo wörld"}`, `{"s":null,"i":null}`, `{"i":1.0}`, `{"i":1e2}`,
		`{"x":1}`, `{"S":"a"}`, `{"s":"abcdefgh\\"}`, `{"s":"abcdefghé\\n"}`, `{"b":false,"f":-0,"i":-0}`} {
		f.Add(s)
	}
	typ := reflect.TypeFor[identityArgs]()
	fc := newFlatCodec(typ)
	sch, err := schemaFor(typ, schemaInput)
	if err != nil {
		f.Fatal(err)
	}
	a, err := compileArgSchema(sch)
	if err != nil || a.flat == nil || fc == nil {
		f.Fatalf("not flat: %v", err)
	}
	m := fc.mapFrom(a.flat)
	if !m.identity {
		f.Fatalf("not identity: %v %v", a.flat.names, fc.names)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) || !argsObject([]byte(args)) {
			return
		}
		var vals [maxFlat][]byte
		e, scanned := a.checkScan([]byte(args), &vals)
		if !scanned || e != nil {
			return
		}
		var fast identityArgs
		if !fc.decodeScanned(m, &vals, unsafe.Pointer(&fast), &strChunk{}, false) {
			return
		}
		var slow identityArgs
		if err := codec.Unmarshal([]byte(args), &slow); err != nil {
			t.Fatalf("%s: in place %+v, sonic refused %v", args, fast, err)
		}
		if fast != slow {
			t.Fatalf("%s: in place %+v, sonic %+v", args, fast, slow)
		}
	})
}
