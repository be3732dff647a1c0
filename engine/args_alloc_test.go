//go:build !race

package engine

import "testing"

// TestArgCheckAllocs: the flat check and the any-object check allocate
// nothing for valid arguments (the reference echo's schema, the default
// schema).
func TestArgCheckAllocs(t *testing.T) {
	flat, err := compileArgSchema([]byte(echoSchema))
	if err != nil || flat.flat == nil {
		t.Fatal(err)
	}
	anyObj, err := compileArgSchema([]byte(`{"type":"object"}`))
	if err != nil || !anyObj.anyObject {
		t.Fatal(err)
	}
	args := []byte(`{"text":"hello world","other":[1,2,{"x":null}]}`)
	for name, a := range map[string]*argSchema{"flat": flat, "anyObject": anyObj} {
		if n := testing.AllocsPerRun(100, func() {
			if e := a.check(args); e != nil {
				t.Fatal(e.Message)
			}
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per check, want 0", name, n)
		}
	}
}
