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
