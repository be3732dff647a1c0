package client

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestLineSameIDTwice (RELIABILITY D5) on a line transport: the server
// answers call 1 with a response for an id never sent, then its own
// response twice, then answers call 2. Call 1 gets its result once; the
// stray response and the second copy are dropped and counted as
// unmatched; call 2 is not disturbed (it does not get call 1's copy).
func TestLineSameIDTwice(t *testing.T) {
	lt, _ := lineFake(t, LineConfig{}, func(m map[string]json.RawMessage, reply func(string)) {
		if m["id"] == nil {
			return
		}
		id := string(m["id"])
		go func() {
			if id == "1" {
				reply(`{"jsonrpc":"2.0","id":424242,"result":{"n":"stray"}}`)
				reply(`{"jsonrpc":"2.0","id":1,"result":{"n":"first"}}`)
				reply(`{"jsonrpc":"2.0","id":1,"result":{"n":"second"}}`)
				return
			}
			reply(`{"jsonrpc":"2.0","id":` + id + `,"result":{"n":"two"}}`)
		}()
	})
	ctx := ctx10(t)
	for i, want := range []string{"first", "two"} {
		x, err := lt.Open(ctx, lineOut(i+1, "tools/call", false))
		if err != nil {
			t.Fatal(err)
		}
		m, err := x.Next(ctx)
		if err != nil || !strings.Contains(string(m), `"n":"`+want+`"`) {
			t.Fatalf("call %d: Next = %s, %v; want the result %q", i+1, m, err, want)
		}
		if _, err := x.Next(ctx); err != io.EOF {
			t.Fatalf("call %d: after the response: %v, want io.EOF", i+1, err)
		}
		_ = x.Close()
		if i == 0 {
			// The stray response and the second copy come before call 2
			// is sent (one reader, in order).
			waitFor(t, "two unmatched responses", func() bool { return lt.Stats().Unmatched == 2 })
		}
	}
	if u := lt.Stats().Unmatched; u != 2 {
		t.Fatalf("Unmatched = %d, want 2 (the stray id and the second copy of id 1)", u)
	}
}
