package codec

import (
	"errors"
	"testing"
)

func TestLookupMembers(t *testing.T) {
	names := []string{"region", "priority", "dry_run"}
	vals := make([][]byte, 3)
	err := LookupMembers([]byte(`{"region":"us-west1","priority":42,"query":"SELECT {1}","dry_run":false}`), names, vals)
	if err != nil || string(vals[0]) != `"us-west1"` || string(vals[1]) != "42" || string(vals[2]) != "false" {
		t.Fatalf("got %q %v", vals, err)
	}
	err = LookupMembers([]byte(`{"region":"a"}`), names, vals)
	if err != nil || string(vals[0]) != `"a"` || vals[1] != nil || vals[2] != nil {
		t.Fatalf("absent members: %q %v", vals, err)
	}
	if err := LookupMembers([]byte(`{"region":"a","re\u0067ion":"b"}`), names, vals); !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("duplicate (escaped) member: %v", err)
	}
	if err := LookupMembers([]byte(`{"region":`), names, vals); err == nil {
		t.Fatal("truncated object accepted")
	}
	if err := LookupMembers([]byte(`[1]`), names, vals); err != nil || vals[0] != nil {
		t.Fatalf("non-object: %q %v", vals, err)
	}
	obj := []byte(`{"region":"us-west1","priority":42,"dry_run":false}`)
	allocs := testing.AllocsPerRun(100, func() { _ = LookupMembers(obj, names, vals) })
	if allocs != 0 {
		t.Fatalf("%v allocs", allocs)
	}
}

// TestScanMembersCounts: the count a closed schema's check compares with
// the members it names.
func TestScanMembersCounts(t *testing.T) {
	names := []string{"text"}
	vals := make([][]byte, 1)
	for i, tc := range []struct {
		obj  string
		n    int
		text string
	}{
		0: {`{}`, 0, ""},
		1: {` { "text" : "a" } `, 1, `"a"`},
		2: {`{"text":"a","more":{"text":1},"x":[1,{"y":2}]}`, 3, `"a"`},
		3: {`{"other":1}`, 1, ""},
		4: {`[{"text":1}]`, 0, ""},
	} {
		n, err := ScanMembers([]byte(tc.obj), names, vals)
		if err != nil || n != tc.n || string(vals[0]) != tc.text {
			t.Errorf("%d: %s: %d %q %v, want %d %q", i, tc.obj, n, vals[0], err, tc.n, tc.text)
		}
	}
	if _, err := ScanMembers([]byte(`{"text":1,"text":2}`), names, vals); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("duplicate: %v", err)
	}
}
