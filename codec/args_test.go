package codec

import (
	"bytes"
	"testing"
)

// TestScanArgumentsRecorded: Peek records the members of a flat compact
// params.arguments object (so the engine's flat check does not scan them
// again), and only then; ScanArguments gives what ScanMembers gives either
// way (FuzzScanArguments compares them on any input).
func TestScanArgumentsRecorded(t *testing.T) {
	for _, c := range []struct {
		args     string
		recorded bool
	}{
		{`{"text":"hello world"}`, true},
		{`{}`, true},
		{`{"a":1,"b":"x","c":true,"d":null}`, true},
		{`{"a":1,"b":2,"c":3,"text":4}`, true},        // maxArgMembers: the table's size
		{`{"a":1,"b":2,"c":3,"d":4,"text":5}`, false}, // one more: scanned again
		{`{"text" : "x"}`, false},                     // whitespace after ':' (skipFlat refuses it)
		{`{"te\u0078t":"x"}`, false},                  // an escaped name
		{`{"text":[1]}`, false},                       // a nested value
		{`{"text":"x","text":"y"}`, true},
		{`"text"`, false},
		{`[]`, false},
	} {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + c.args + `,"_meta":{"progressToken":1}}}`)
		var env Envelope
		if err := Peek(msg, &env); err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if got := env.argN != 0; got != c.recorded {
			t.Errorf("%s: recorded %v, want %v", c.args, got, c.recorded)
		}
		names := []string{"text", "b"}
		got, want := make([][]byte, 2), make([][]byte, 2)
		gn, gerr := env.ScanArguments(names, got)
		wn, werr := ScanMembers(env.Arguments, names, want)
		if gn != wn || gerr != werr || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
			t.Errorf("%s: ScanArguments %d %v %q, ScanMembers %d %v %q", c.args, gn, gerr, got, wn, werr, want)
		}
	}
}

// TestScanArgumentsAfterRebase: the recorded members are offsets into
// Arguments, so they follow it when Rebase moves the envelope to a copy.
func TestScanArgumentsAfterRebase(t *testing.T) {
	msg := []byte(fixture)
	var env Envelope
	if err := Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	cp := append([]byte(nil), msg...)
	env.Rebase(msg, cp)
	for i := range msg {
		msg[i] = 'x'
	}
	vals := make([][]byte, 1)
	if n, err := env.ScanArguments([]string{"text"}, vals); n != 1 || err != nil || string(vals[0]) != `"hello world"` {
		t.Fatalf("%d %v %q", n, err, vals[0])
	}
}

func TestScanArgumentsAllocs(t *testing.T) {
	msg := []byte(fixture)
	var env Envelope
	names := []string{"text"}
	vals := make([][]byte, 1)
	if n := testing.AllocsPerRun(100, func() {
		if Peek(msg, &env) != nil {
			t.Fatal("peek")
		}
		if n, err := env.ScanArguments(names, vals); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	}); n != 0 {
		t.Fatalf("%v allocs", n)
	}
}
