package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// exampleConn sends msgs on an in-memory connection authenticated as
// principal and prints the answers in order.
func exampleConn(srv *engine.Server, principal any, msgs ...string) {
	got := make(chan string, len(msgs))
	conn := linestream.NewMem(engine.NewScope(srv, ""), func(frame []byte) error {
		got <- string(frame)
		return nil
	}, linestream.Config{}, principal)
	defer conn.Close()
	for _, m := range msgs {
		_ = conn.Send([]byte(m))
		fmt.Println(<-got)
	}
}

const exampleMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// A middleware chain: an audit log around every request, and a
// per-principal quota that refuses with -32000 (HTTP 429 on Streamable
// HTTP) before the handler runs.
func ExampleMiddleware() {
	audit := func(next engine.HandlerFunc) engine.HandlerFunc {
		return func(c *engine.Call) error {
			err := next(c) // return next's error unchanged
			fmt.Printf("audit: %v %s %s, refused: %v\n", c.Principal(), c.Method(), c.Name(), err != nil)
			return err
		}
	}
	var mu sync.Mutex
	left := map[string]int{"alice": 1}
	overQuota := codec.NewError(-32000, "Quota exceeded")
	overQuota.Status = 429
	quota := func(next engine.HandlerFunc) engine.HandlerFunc {
		return func(c *engine.Call) error {
			who, _ := c.Principal().(string)
			mu.Lock()
			ok := left[who] > 0
			left[who]--
			mu.Unlock()
			if !ok {
				return overQuota
			}
			return next(c)
		}
	}
	srv := engine.New(engine.Config{
		Name: "example", Version: "1",
		Middleware: []engine.Middleware{audit, quota}, // audit is outermost
	})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "hello", Handler: func(c *engine.Call) error {
		c.Text("hello")
		return nil
	}})
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"hello",` + exampleMeta + `}}`
	}
	exampleConn(srv, "alice", call("1"), call("2"))
	// Output:
	// audit: alice tools/call hello, refused: false
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
	// audit: alice tools/call hello, refused: true
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Quota exceeded"}}
}

// A per-principal tool filter: "admin_reset" exists only for the admin.
// Other callers do not see it in tools/list (whose result is then marked
// cacheScope "private"), and calling it gets the unknown-tool error.
func ExampleToolFilter() {
	srv := engine.New(engine.Config{
		Name: "example", Version: "1", CacheTTL: -1,
		ToolFilter: func(c *engine.Call, t *engine.Tool) bool {
			return !strings.HasPrefix(t.Name, "admin_") || c.Principal() == "admin"
		},
	})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	for _, name := range []string{"admin_reset", "search"} {
		_ = srv.AddTool(engine.Tool{Name: name, Handler: func(c *engine.Call) error {
			c.Text("done")
			return nil
		}})
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + exampleMeta + `}}`
	reset := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"admin_reset",` + exampleMeta + `}}`
	exampleConn(srv, "admin", list)
	exampleConn(srv, "guest", list, reset)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"admin_reset","inputSchema":{"type":"object"}},{"name":"search","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":"search","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1"}}}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: admin_reset"}}
}

// Hooks see every call end, with why: here a log line per call.
func ExampleHooks() {
	// CallEnd runs once the handler has returned and the answer is on its
	// way, so two requests' hooks may run in either order: the example
	// collects them, then prints them in order.
	ends := make(chan string, 2)
	srv := engine.New(engine.Config{
		Name: "example", Version: "1",
		Hooks: engine.Hooks{
			CallEnd: func(c *engine.Call, o engine.Outcome) {
				ends <- fmt.Sprintf("%s %s: %s code=%d", c.Method(), c.Name(), o.Reason, o.Code)
			},
		},
	})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddTool(engine.Tool{Name: "hello", Handler: func(c *engine.Call) error {
		c.Text("hello")
		return nil
	}})
	ok := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello",` + exampleMeta + `}}`
	bad := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope",` + exampleMeta + `}}`
	conn := linestream.NewMem(engine.NewScope(srv, ""), func([]byte) error { return nil }, linestream.Config{}, nil)
	defer conn.Close()
	_ = conn.Send([]byte(ok))
	_ = conn.Send([]byte(bad))
	lines := []string{<-ends, <-ends}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// tools/call hello: ok code=0
	// tools/call nope: error code=-32602
}
