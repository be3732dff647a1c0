//go:build !race

package legacy_test

import (
	"bytes"
	"testing"
)

// TestLegacyCallAllocs: the common case of the legacy endpoint — a
// tools/call echo with its progressToken inside a live session, through
// the fasthttp front end as `mcpwire serve --legacy-path` mounts it —
// costs at most 5 allocations per call, the server's whole work counted
// (the client below allocates nothing). Issue 21 item 1; it took 81
// through the net/http adapter. 2 are left: the echo handler's string
// and the in-flight id (the session record is not read from the
// state.Memory while its generation stands; it was the third).
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
	if n > 5 {
		t.Fatalf("%.2f allocations per legacy call, want <= 5", n)
	}
}
