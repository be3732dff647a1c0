// Command mcpgoclient drives an MCP server through the client of
// github.com/mark3labs/mcp-go (version pinned in ../go.mod), over Streamable
// HTTP (-url) or stdio (server command after the flags), and runs the script
// described in package flow.
//
// mcp-go opens subscriptions/listen when asked (ListenAsync) and hands every
// notification on it, the acknowledgement included, to OnNotification.
package main

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpwire/mcpwire/interop/goclients/internal/flow"
)

func main() {
	cfg := flow.Parse("mcp-go")
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()

	var tr transport.Interface
	if cfg.Transport == "http" {
		h, err := transport.NewStreamableHTTP(cfg.URL)
		if err != nil {
			cfg.Fail("transport", err)
		}
		tr = h
	} else {
		tr = transport.NewStdioWithOptions(cfg.Command[0], os.Environ(), cfg.Command[1:],
			transport.WithCommandStderrWriter(os.Stderr))
	}

	c := client.NewClient(tr, client.WithProtocolVersion(cfg.Version))
	defer c.Close()

	acked := make(chan struct{})
	changed := make(chan struct{})
	var ackOnce, changedOnce sync.Once
	var honored any
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		switch n.Method {
		case "notifications/subscriptions/acknowledged":
			ackOnce.Do(func() {
				honored = n.Params.AdditionalFields
				close(acked)
			})
		case "notifications/tools/list_changed":
			changedOnce.Do(func() { close(changed) })
		}
	})

	if err := c.Start(ctx); err != nil {
		cfg.Fail("connect", err)
	}
	var initReq mcp.InitializeRequest
	initReq.Params.ProtocolVersion = cfg.Version
	initReq.Params.ClientInfo = mcp.Implementation{Name: "mcpwire-interop-mcpgo", Version: "0.1.0"}
	init, err := c.Initialize(ctx, initReq)
	if err != nil {
		cfg.Fail("connect", err)
	}
	cfg.Step("connect", map[string]any{"negotiated": c.ProtocolVersion(), "server": init.ServerInfo})
	cfg.CheckVersion(c.ProtocolVersion())

	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		cfg.Fail("tools/list", err)
	}
	names := make([]string, 0, len(list.Tools))
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	cfg.CheckTools(names)
	cfg.Step("tools/list", map[string]any{"count": len(names)})

	var echo mcp.CallToolRequest
	echo.Params.Name = "echo"
	echo.Params.Arguments = map[string]any{"text": cfg.EchoText}
	res, err := c.CallTool(ctx, echo)
	if err != nil {
		cfg.Fail("tools/call echo", err)
	}
	var texts []string
	for _, content := range res.Content {
		if t, ok := mcp.AsTextContent(content); ok {
			texts = append(texts, t.Text)
		}
	}
	cfg.CheckEcho(res.IsError, texts)
	cfg.Step("tools/call echo", map[string]any{"text": texts[0]})

	listenErr := make(chan error, 1)
	stop, err := c.ListenAsync(ctx, mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { listenErr <- err })
	if err != nil {
		cfg.Fail("subscriptions/listen", err)
	}
	select {
	case err := <-listenErr:
		cfg.Fail("subscriptions/listen", err)
	default:
	}
	cfg.Await(acked, "subscriptions/listen", "notifications/subscriptions/acknowledged")
	cfg.Step("subscriptions/listen", map[string]any{"acknowledged": honored})

	var trig mcp.CallToolRequest
	trig.Params.Name = cfg.Trigger
	out, err := c.CallTool(ctx, trig)
	if err != nil {
		cfg.Fail("tools/call "+cfg.Trigger, err)
	}
	if out.IsError {
		cfg.Fail("tools/call "+cfg.Trigger, errors.New("isError result"))
	}
	cfg.Step("tools/call "+cfg.Trigger, nil)
	cfg.Await(changed, "notifications/tools/list_changed", "notifications/tools/list_changed on the listen stream")
	cfg.Step("notifications/tools/list_changed", nil)

	stop()
	select {
	case err := <-listenErr:
		cfg.Fail("subscriptions/listen close", err)
	default:
	}
	if err := c.Close(); err != nil {
		cfg.Fail("close", err)
	}
	cfg.Step("close", nil)
	cfg.Done()
}
