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
