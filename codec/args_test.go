package codec

import (
	"bytes"
	"strings"
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
		// 64 KiB: the offsets are 16 bits, the object's length too.
		{`{"text":"` + strings.Repeat("x", 0xffff-11) + `"}`, true},
		{`{"text":"` + strings.Repeat("x", 0xffff-10) + `"}`, false},
		{`{"a":1,"text":"` + strings.Repeat("x", 0xffff-17) + `"}`, true},
		{`{"a":1,"text":"` + strings.Repeat("x", 0xffff-16) + `"}`, false},
	} {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + c.args + `,"_meta":{"progressToken":1}}}`)
		var env Envelope
		if err := Peek(msg, &env); err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if got := env.argN != 0; got != c.recorded {
			t.Errorf("%s: recorded %v, want %v", c.args, got, c.recorded)
		}
		if c.recorded && int(env.argLen) != len(env.Arguments) {
			t.Errorf("%s: recorded for %d bytes of arguments, not %d: the table is never used", c.args, env.argLen, len(env.Arguments))
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

// TestScanArgumentsReplaced: an Arguments a caller set after Peek is
// scanned, not read through offsets recorded for other bytes (which could
// point past its end); KeepArguments carries the table to an envelope
// whose Arguments are the same bytes elsewhere, and to no other.
func TestScanArgumentsReplaced(t *testing.T) {
	var env Envelope
	if err := Peek([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world","b":2},"_meta":{"progressToken":1}}}`), &env); err != nil {
		t.Fatal(err)
	}
	if env.argN == 0 {
		t.Fatal("not recorded")
	}
	src := env
	env.Arguments = []byte(`{"b":1}`)
	names, vals := []string{"text", "b"}, make([][]byte, 2)
	n, err := env.ScanArguments(names, vals)
	if n != 1 || err != nil || vals[0] != nil || string(vals[1]) != "1" {
		t.Errorf("replaced arguments: %d %v %q, want 1 <nil> [nil 1]", n, err, vals)
	}

	same := src
	same.Arguments = []byte(`{"text":"hello worl","b":22}`) // as long as src's, other bytes elsewhere
	if len(same.Arguments) != len(src.Arguments) {
		t.Fatalf("lengths %d and %d", len(same.Arguments), len(src.Arguments))
	}
	if n, err = same.ScanArguments(names, vals); n != 2 || err != nil || string(vals[0]) != `"hello worl"` {
		t.Errorf("replaced arguments of the same length: %d %v %q", n, err, vals)
	}

	var dst Envelope
	dst.Arguments = append([]byte(nil), src.Arguments...) // the same bytes, elsewhere
	dst.KeepArguments(&src)
	if dst.argN != src.argN || dst.args != src.args {
		t.Errorf("KeepArguments did not carry the table: %d %v", dst.argN, dst.args)
	}
	if n, err = dst.ScanArguments(names, vals); n != 2 || err != nil || string(vals[0]) != `"hello world"` || string(vals[1]) != "2" {
		t.Errorf("kept table: %d %v %q", n, err, vals)
	}
	other := Envelope{Arguments: []byte(`{"text":"hello world","b":3}`)} // same length, other bytes
	other.KeepArguments(&src)
	if other.argN != 0 {
		t.Error("KeepArguments carried the table to other bytes")
	}
}

// TestArgumentsRecordedAtEnd: arguments that end the message (params last,
// arguments last in it: `…"text":"hello world"}}}`), whose last string or
// name lies within the final 8 bytes where the word-at-a-time string scan
// gives up, are recorded too when plain, whatever that string's length,
// and still not when it holds an escape or a non-ASCII byte; ScanArguments
// gives what ScanMembers gives either way.
func TestArgumentsRecordedAtEnd(t *testing.T) {
	for _, c := range []struct {
		last     string
		recorded bool
	}{
		{``, true}, {`a`, true}, {`hello`, true}, {`hello w`, true}, {`hello world`, true}, {`hello world, again`, true},
		{`caf\u00e9`, false}, {"café", false}, {`a\"b`, false}, {`x\\`, false},
	} {
		for _, key := range []string{"t", "text", "a_longer_key"} {
			args := `{"n":1,"` + key + `":"` + c.last + `"}`
			msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`)
			var env Envelope
			if err := Peek(msg, &env); err != nil {
				t.Fatalf("%s: %v", msg, err)
			}
			if got := env.PlainArguments() == 2; got != c.recorded {
				t.Errorf("%s: recorded %v (%d), want %v", args, got, env.PlainArguments(), c.recorded)
			}
			names := []string{key, "n"}
			got, want := make([][]byte, 2), make([][]byte, 2)
			gn, gerr := env.ScanArguments(names, got)
			wn, werr := ScanMembers(env.Arguments, names, want)
			if gn != wn || gerr != werr || !bytes.Equal(got[0], want[0]) || !bytes.Equal(got[1], want[1]) {
				t.Errorf("%s: ScanArguments %d %v %q, ScanMembers %d %v %q", args, gn, gerr, got, wn, werr, want)
			}
		}
	}
	for _, c := range []struct {
		args string
		n    int
	}{
		{`{"a":1}`, 1},             // a name within the final 8 bytes: `a":1}}}` is 7
		{`{"a":true,"b":null}`, 2}, // literals at the end
		{`{"a":1,"b":2,"c":3,"d":"x"}`, 4},
		{`{"a":1,"b":2,"c":3,"d":4,"e":"x"}`, -1}, // more than maxArgMembers
		{`{"a":[1],"b":"x"}`, -1},                 // a nested value
		{`{"a" :"x"}`, 1},                         // whitespace before ':', as skipArgs takes it
		{`{"a": "x"}`, -1},                        // whitespace after ':', as skipArgs refuses it
	} {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":` + c.args + `}}`)
		var env Envelope
		if err := Peek(msg, &env); err != nil || env.PlainArguments() != c.n {
			t.Errorf("%s: %v, %d recorded, want %d", c.args, err, env.PlainArguments(), c.n)
		}
	}
}
