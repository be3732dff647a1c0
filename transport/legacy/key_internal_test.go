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
	if ss.calls.get("100000001") != c {
		t.Fatal("the call is not found under its id once the body is reused")
	}
	if ss.calls.len() != 1 {
		t.Fatalf("%d calls, want 1", ss.calls.len())
	}
	ss.removeCall(kept, c)
	if ss.calls.len() != 0 {
		t.Fatalf("%d calls after removeCall, want 0", ss.calls.len())
	}

	// A call already gone is not put back.
	if got := ss.keepKey("7", c); got != "7" || ss.calls.len() != 0 {
		t.Fatalf("keepKey of a call not there: %q, %d calls", got, ss.calls.len())
	}
}

// TestOutcomeCompleteOnce: a reply's complete result is worked out once
// and is the frame's own: a call used again (pooled) answers for its new
// frame, not the one before.
func TestOutcomeCompleteOnce(t *testing.T) {
	c := newCall()
	id := []byte("1")
	frame := func(text string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"` + text + `"}]}}`)
	}
	_ = c.Reply(nil, frame("one"), 200)
	want, _ := completeResult(frame("one"), id)
	if res, ok := c.reply.complete(id); !ok || string(res) != string(want) {
		t.Fatalf("first: %s %v", res, ok)
	}
	c.release()
	_ = c.Reply(nil, frame("two"), 200)
	want, _ = completeResult(frame("two"), id)
	if res, ok := c.reply.complete(id); !ok || string(res) != string(want) {
		t.Fatalf("after reuse: %s %v, want %s", res, ok, want)
	}
	_ = c.Reply(nil, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`), 200)
	if res, ok := c.reply.complete(id); ok {
		t.Fatalf("an error frame after a result: %s %v", res, ok)
	}
}

// TestInflightSlotAndMap: the first call in flight is kept off the map,
// the others in it; every way in (the duplicate check, cancel's lookup,
// keepKey, removeCall, the count the idle sweep reads and markGone) sees
// both, and a key is never in both.
func TestInflightSlotAndMap(t *testing.T) {
	ss := &session{}
	a, b, c := newCall(), newCall(), newCall()
	if !ss.addCall("1", a) || !ss.addCall("2", b) {
		t.Fatal("addCall")
	}
	if ss.calls.one != a || ss.calls.more["2"] != b {
		t.Fatalf("placed: one %p, more %v", ss.calls.one, ss.calls.more)
	}
	for _, k := range []string{"1", "2"} {
		if ss.addCall(k, c) {
			t.Fatalf("id %s accepted twice", k)
		}
	}
	if ss.calls.get("1") != a || ss.calls.get("2") != b || ss.calls.get("3") != nil || ss.calls.len() != 2 {
		t.Fatalf("get: %p %p %p, len %d", ss.calls.get("1"), ss.calls.get("2"), ss.calls.get("3"), ss.calls.len())
	}
	// Removing another call's key, or a key with another call, leaves it.
	ss.removeCall("1", b)
	ss.removeCall("2", a)
	if ss.calls.len() != 2 {
		t.Fatalf("len %d after removes of the wrong call", ss.calls.len())
	}
	// The slot frees up: the next call takes it; "2" is still found.
	ss.removeCall("1", a)
	if ss.calls.get("1") != nil || ss.calls.oneKey != "" || ss.calls.len() != 1 {
		t.Fatalf("after remove: %p %q %d", ss.calls.get("1"), ss.calls.oneKey, ss.calls.len())
	}
	if ss.addCall("2", c) {
		t.Fatal("id 2 (in the map) accepted again once the slot was free")
	}
	if !ss.addCall("3", c) || ss.calls.one != c {
		t.Fatal("id 3 did not take the free slot")
	}
	// keepKey of a call in the map, and of the one in the slot.
	if k := ss.keepKey("2", b); k != "2" || ss.calls.get("2") != b {
		t.Fatalf("keepKey in the map: %q %p", k, ss.calls.get("2"))
	}
	if k := ss.keepKey("3", c); k != "3" || ss.calls.get("3") != c || ss.calls.len() != 2 {
		t.Fatalf("keepKey in the slot: %q %p %d", k, ss.calls.get("3"), ss.calls.len())
	}
	// A call in the map leaves it.
	ss.removeCall("2", b)
	if ss.calls.get("2") != nil || ss.calls.len() != 1 {
		t.Fatalf("after remove from the map: %p %d", ss.calls.get("2"), ss.calls.len())
	}
	if !ss.addCall("2", b) || ss.calls.more["2"] != b {
		t.Fatal("id 2 not filed in the map again")
	}
	// markGone claims both: neither may run once it has.
	ss.markGone()
	for _, x := range []*call{b, c} {
		if x.cancelled != errSessionEnded {
			t.Fatalf("call %p not claimed by markGone", x)
		}
	}
	if ss.addCall("4", newCall()) {
		t.Fatal("addCall after markGone")
	}
}
