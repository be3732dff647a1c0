//go:build !race

package legacy_test

import (
	"bytes"
	"testing"
)

// TestLegacyCallAllocs: the common case of the legacy endpoint — a
// tools/call echo with its progressToken inside a live session, through
// the fasthttp front end as `mcpwire serve --legacy-path` mounts it —
// costs one allocation per call, the server's whole work counted (the
// client below allocates nothing): the echo handler's string, which the
// modern endpoint's call makes too. Issue 21 item 1; it took 81 through
// the net/http adapter, 2 before round 16 (the in-flight id, now the
// id's bytes in the body, and the fast sink boxed into rounds' interface,
// now a pointer into the pooled fastReq). 1.1 leaves room for a pool
// emptied by a GC during the run.
func TestLegacyCallAllocs(t *testing.T) {
	w := startWireRig(t, newInlineEngine(t))
	req := w.request(legacyPath, w.sid, fixtureLegacy)
	for range 200 { // warm the pools
		w.quick(t, req)
	}
	if !bytes.Contains(w.body, []byte(`"hello world"`)) || !bytes.HasPrefix(w.body, []byte(`{"jsonrpc":"2.0","id":100000001,"result":`)) {
		t.Fatalf("answer: %s", w.body)
	}
	n := testing.AllocsPerRun(2000, func() { w.quick(t, req) })
	t.Logf("%.2f allocations per legacy call", n)
	if n > 1.1 {
		t.Fatalf("%.2f allocations per legacy call, want 1", n)
	}
}
