//go:build !race

package engine

import "testing"

// TestArgCheckAllocs: the flat check (open and closed, as typed tools
// infer it) and the any-object check allocate nothing for valid arguments
// (the reference echo's schema, the default schema).
func TestArgCheckAllocs(t *testing.T) {
	flat, err := compileArgSchema([]byte(echoSchema))
	if err != nil || flat.flat == nil {
		t.Fatal(err)
	}
	anyObj, err := compileArgSchema([]byte(`{"type":"object"}`))
	if err != nil || !anyObj.anyObject {
		t.Fatal(err)
	}
	closed, err := compileArgSchema([]byte(`{"type":"object","properties":{"text":{"type":"string"},"other":{"type":"array"}},"required":["text"],"additionalProperties":false}`))
	if err != nil || closed.flat == nil || !closed.flat.closed {
		t.Fatal(err)
	}
	args := []byte(`{"text":"hello world","other":[1,2,{"x":null}]}`)
	for name, a := range map[string]*argSchema{"flat": flat, "anyObject": anyObj, "closed": closed} {
		if n := testing.AllocsPerRun(100, func() {
			if e := a.check(args); e != nil {
				t.Fatal(e.Error())
			}
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per check, want 0", name, n)
		}
	}
}
