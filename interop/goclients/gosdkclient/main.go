// Command gosdkclient drives an MCP server through the client of
// github.com/modelcontextprotocol/go-sdk (version pinned in ../go.mod), over
// Streamable HTTP (-url) or stdio (server command after the flags), and runs
// the script described in package flow.
//
// go-sdk opens subscriptions/listen itself, during Connect, when a
// ToolListChangedHandler is set and the server advertises tools.listChanged;
// it does not wait for the acknowledgement, so a receiving middleware
// watches for notifications/subscriptions/acknowledged before the trigger
// tool is called.
package main

import (
	"context"
	"errors"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpwire/mcpwire/interop/goclients/internal/flow"
)

func main() {
	cfg := flow.Parse("go-sdk")
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()

	var transport mcp.Transport
	if cfg.Transport == "http" {
		transport = &mcp.StreamableClientTransport{Endpoint: cfg.URL, MaxRetries: -1}
	} else {
		transport = &mcp.CommandTransport{Command: exec.Command(cfg.Command[0], cfg.Command[1:]...)}
	}

	acked := make(chan struct{})
	changed := make(chan struct{})
	var ackOnce, changedOnce sync.Once
	var honored any
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpwire-interop-gosdk", Version: "0.1.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changedOnce.Do(func() { close(changed) })
		},
	})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				ackOnce.Do(func() {
					honored = req.GetParams()
					close(acked)
				})
			}
			return next(ctx, method, req)
		}
	})

	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: cfg.Version})
	if err != nil {
		cfg.Fail("connect", err)
	}
	defer session.Close()
	init := session.InitializeResult()
	cfg.Step("connect", map[string]any{"negotiated": init.ProtocolVersion, "server": init.ServerInfo})
	cfg.CheckVersion(init.ProtocolVersion)
	if init.Capabilities == nil || init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
		cfg.Fail("connect", errors.New("server does not advertise tools.listChanged, so go-sdk opens no subscriptions/listen"))
	}

	list, err := session.ListTools(ctx, nil)
	if err != nil {
		cfg.Fail("tools/list", err)
	}
	names := make([]string, 0, len(list.Tools))
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	cfg.CheckTools(names)
	cfg.Step("tools/list", map[string]any{"count": len(names)})

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": cfg.EchoText}})
	if err != nil {
		cfg.Fail("tools/call echo", err)
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	cfg.CheckEcho(res.IsError, texts)
	cfg.Step("tools/call echo", map[string]any{"text": texts[0]})

	cfg.Await(acked, "subscriptions/listen", "notifications/subscriptions/acknowledged")
	cfg.Step("subscriptions/listen", map[string]any{"acknowledged": honored})

	trig, err := session.CallTool(ctx, &mcp.CallToolParams{Name: cfg.Trigger, Arguments: map[string]any{}})
	if err != nil {
		cfg.Fail("tools/call "+cfg.Trigger, err)
	}
	if trig.IsError {
		cfg.Fail("tools/call "+cfg.Trigger, errors.New("isError result"))
	}
	cfg.Step("tools/call "+cfg.Trigger, nil)
	cfg.Await(changed, "notifications/tools/list_changed", "notifications/tools/list_changed on the listen stream")
	cfg.Step("notifications/tools/list_changed", nil)

	if err := session.Close(); err != nil {
		cfg.Fail("close", err)
	}
	cfg.Step("close", nil)
	cfg.Done()
}
