//go:build !race

package engine

import (
	"context"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// TestListAllocs: a list request allocates nothing, whether it is served
// from the cached first page or builds a later page after a cursor, on
// each of the four lists, and with a ToolFilter that allocates nothing.
func TestListAllocs(t *testing.T) {
	for _, opt := range []Config{{PageSize: 10}, {PageSize: 10, ToolFilter: func(c *Call, t *Tool) bool { return t.Name != "tool-00003" }}} {
		s := catalogServer(t, opt, 50)
		sc := NewScope(s, "stdio")
		for _, m := range listMethods {
			first := decodePage(t, m, rpc(t, s, m, "").frame)
			for name, params := range map[string]string{
				"first": "",
				"later": `"cursor":"` + *first.Result.NextCursor + `"`,
			} {
				msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{` + params + `,` + testMeta + `}}`)
				if params == "" {
					msg = []byte(`{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{` + testMeta + `}}`)
				}
				var env codec.Envelope
				rep := &nopReply{}
				run := func() {
					if err := codec.Peek(msg, &env); err != nil {
						t.Fatal(err)
					}
					r := sc.BeginBorrowed(context.Background(), msg, &env, rep, nil)
					if e := r.Check(); e != nil {
						t.Fatal(e.Message)
					}
					r.Run()
				}
				run()
				if a := testing.AllocsPerRun(1000, run); a != 0 {
					t.Errorf("%s %s (filter %v): %.2f allocations per request, want 0", m, name, opt.ToolFilter != nil, a)
				}
			}
		}
	}
}
