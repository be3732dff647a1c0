package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// serveLine runs srv over one request line (stdio framing, in memory) and
// returns what the engine answered.
func serveLine(srv *engine.Server, line string) string {
	var out bytes.Buffer
	_ = stdio.ServeConn(context.Background(), srv, strings.NewReader(line+"\n"), &out, stdio.Config{})
	return strings.TrimSpace(out.String())
}

// meta (hooks_test.go) is the _meta every request carries.

// A tool with typed arguments (Bind), a text result, and a plain Go error
// that becomes an isError result the model can read.
func ExampleServer_AddTool() {
	srv := engine.New(engine.Config{Name: "calc", Version: "1.0.0"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	err := srv.AddTool(engine.Tool{
		Name:        "divide",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Handler: func(c *engine.Call) error {
			var in struct {
				A float64 `json:"a"`
				B float64 `json:"b"`
			}
			if err := c.Bind(&in); err != nil {
				return err
			}
			if in.B == 0 {
				return errors.New("division by zero") // an isError result, not a JSON-RPC error
			}
			c.Text(strconv.FormatFloat(in.A/in.B, 'g', -1, 64))
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(serveLine(srv, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":8},`+meta+`}}`))
	fmt.Println(serveLine(srv, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":0},`+meta+`}}`))
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"0.125"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calc","version":"1.0.0"}}}}
	// {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"division by zero"}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calc","version":"1.0.0"}}}}
}

// A resource read by URI; Return encodes any result object. Static
// resources carry caching hints (ttlMs, cacheScope).
func ExampleServer_AddResource() {
	srv := engine.New(engine.Config{Name: "files", Version: "1.0.0"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	_ = srv.AddResource(engine.Resource{
		URI:      "file:///project/config.json",
		Name:     "config",
		MimeType: "application/json",
		Handler: func(c *engine.Call, uri string, _ map[string]string) error {
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
				{URI: uri, MimeType: "application/json", Text: `{"debug":false}`},
			}})
		},
	})
	fmt.Println(serveLine(srv, `{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///project/config.json",`+meta+`}}`))
	// Output:
	// {"jsonrpc":"2.0","id":"r","result":{"resultType":"complete","contents":[{"uri":"file:///project/config.json","mimeType":"application/json","text":"{\"debug\":false}"}],"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"files","version":"1.0.0"}}}}
}
