package legacy

import (
	"testing"
	"unsafe"
)

// TestKeepKey: the fast path keys an in-flight call by the id's bytes in
// fasthttp's body; a call that outlives the handler (the stream way) is
// moved under a copy, so that reusing the body's buffer neither loses the
// call nor leaves a key that changes under the map.
func TestKeepKey(t *testing.T) {
	ss := &session{}
	c := &call{}
	buf := []byte("100000001")
	alias := unsafe.String(unsafe.SliceData(buf), len(buf))
	if !ss.addCall(alias, c) {
		t.Fatal("addCall")
	}
	kept := ss.keepKey(alias, c)
	copy(buf, "999999999") // fasthttp reads the next request into it
	if kept != "100000001" {
		t.Fatalf("kept %q", kept)
	}
	if ss.calls["100000001"] != c {
		t.Fatal("the call is not found under its id once the body is reused")
	}
	if len(ss.calls) != 1 {
		t.Fatalf("%d calls, want 1", len(ss.calls))
	}
	ss.removeCall(kept, c)
	if len(ss.calls) != 0 {
		t.Fatalf("%d calls after removeCall, want 0", len(ss.calls))
	}

	// A call already gone is not put back.
	if got := ss.keepKey("7", c); got != "7" || len(ss.calls) != 0 {
		t.Fatalf("keepKey of a call not there: %q, %d calls", got, len(ss.calls))
	}
}
