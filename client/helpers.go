package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// marshalParams encodes helper params.
func marshalParams(v any) (json.RawMessage, error) {
	b, err := marshalRaw(v)
	if err != nil {
		return nil, fmt.Errorf("client: params: %w", err)
	}
	return b, nil
}

// complete returns an error for a result that is not "complete" (an
// input_required result nobody answered).
func complete(r *Result) error {
	if r.Type != "complete" {
		return fmt.Errorf("client: result is %q (set Config.OnInput to answer input requests)", r.Type)
	}
	return nil
}

// CallTool runs tools/call name with arguments (any JSON-encodable value,
// or json.RawMessage). A tool's own failure is a result with IsError set,
// not an error.
func (c *Client) CallTool(ctx context.Context, name string, arguments any, opts *CallOptions) (*mcp.ToolResult, error) {
	var args []byte
	switch a := arguments.(type) {
	case nil:
		args = []byte(`{}`)
	case json.RawMessage:
		args = a
	default:
		b, err := marshalRaw(a)
		if err != nil {
			return nil, fmt.Errorf("client: arguments: %w", err)
		}
		args = b
	}
	params := make([]byte, 0, 32+len(name)+len(args))
	params = append(params, `{"name":`...)
	params = codec.AppendString(params, name)
	params = append(params, `,"arguments":`...)
	params = append(params, args...)
	params = append(params, '}')
	res, err := c.Call(ctx, "tools/call", params, opts)
	if err != nil {
		return nil, err
	}
	if err := complete(res); err != nil {
		return nil, err
	}
	// One allocation for the result and its structuredContent, which is
	// kept as received: sonic, like encoding/json, decodes into what a
	// non-nil pointer held in an interface points to.
	d := new(struct {
		res mcp.ToolResult
		sc  json.RawMessage
	})
	d.res.StructuredContent = &d.sc
	if err := codec.Unmarshal(res.Raw, &d.res); err != nil {
		return nil, fmt.Errorf("client: bad tools/call result: %w", err)
	}
	d.res.StructuredContent = nil
	if d.sc != nil {
		d.res.StructuredContent = d.sc // ToolResult.DecodeStructured reads it
	}
	return &d.res, nil
}

// maxPages bounds a paged listing (a server that always returns a cursor).
const maxPages = 1000

// ListTools runs tools/list through every page. Tools whose x-mcp-header
// annotations are invalid are left out and logged (PARAM-03); the others'
// annotations are remembered for the Mcp-Param-* headers of later calls.
func (c *Client) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	var tools []mcp.Tool
	err := c.pages(ctx, "tools/list", "tools", func(raw json.RawMessage) {
		var t mcp.Tool
		if codec.Unmarshal(raw, &t) != nil || t.Name == "" {
			c.opts.Logger.Warn("client: tools/list entry without a name dropped")
			return
		}
		bs, err := mcp.ParseHeaderBindings(t.InputSchema)
		if err != nil {
			c.opts.Logger.Warn("client: tool dropped: invalid x-mcp-header (PARAM-03)", "tool", t.Name, "reason", err.Error())
			c.tools.Delete(t.Name)
			return
		}
		c.tools.Store(t.Name, bs)
		tools = append(tools, t)
	})
	return tools, err
}

// pages runs a paged list method, handing each item of key to each.
func (c *Client) pages(ctx context.Context, method, key string, each func(json.RawMessage)) error {
	var cursor string
	for page := 0; page < maxPages; page++ {
		var params json.RawMessage
		if cursor != "" {
			params, _ = marshalParams(map[string]string{"cursor": cursor})
		}
		res, err := c.Call(ctx, method, params, nil)
		if err != nil {
			return err
		}
		var r struct {
			NextCursor string `json:"nextCursor"`
		}
		var items map[string]json.RawMessage
		if err := codec.Unmarshal(res.Raw, &items); err != nil {
			return fmt.Errorf("client: bad %s result: %w", method, err)
		}
		var list []json.RawMessage
		if err := codec.Unmarshal(items[key], &list); err != nil {
			return fmt.Errorf("client: %s result has no %s list", method, key)
		}
		for _, it := range list {
			each(it)
		}
		_ = codec.Unmarshal(res.Raw, &r)
		if r.NextCursor == "" || r.NextCursor == cursor {
			return nil
		}
		cursor = r.NextCursor
	}
	return fmt.Errorf("client: %s returned more than %d pages", method, maxPages)
}

// List runs any paged list method (prompts/list, resources/list,
// resources/templates/list) and returns the raw items of key ("prompts",
// "resources", "resourceTemplates").
func (c *Client) List(ctx context.Context, method, key string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := c.pages(ctx, method, key, func(raw json.RawMessage) { out = append(out, raw) })
	return out, err
}

// ReadResource runs resources/read. A legacy server's -32002 comes back as
// an *RPCError with that code (COMPAT-08: "resource not found").
func (c *Client) ReadResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	params, err := marshalParams(map[string]string{"uri": uri})
	if err != nil {
		return nil, err
	}
	res, err := c.Call(ctx, "resources/read", params, nil)
	if err != nil {
		return nil, err
	}
	if err := complete(res); err != nil {
		return nil, err
	}
	var r struct {
		Contents []mcp.ResourceContents `json:"contents"`
	}
	if err := codec.Unmarshal(res.Raw, &r); err != nil {
		return nil, fmt.Errorf("client: bad resources/read result: %w", err)
	}
	return r.Contents, nil
}

// GetPrompt runs prompts/get with string arguments.
func (c *Client) GetPrompt(ctx context.Context, name string, arguments map[string]string) ([]mcp.PromptMessage, error) {
	p := map[string]any{"name": name}
	if arguments != nil {
		p["arguments"] = arguments
	}
	params, err := marshalParams(p)
	if err != nil {
		return nil, err
	}
	res, err := c.Call(ctx, "prompts/get", params, nil)
	if err != nil {
		return nil, err
	}
	if err := complete(res); err != nil {
		return nil, err
	}
	var r struct {
		Messages []mcp.PromptMessage `json:"messages"`
	}
	if err := codec.Unmarshal(res.Raw, &r); err != nil {
		return nil, fmt.Errorf("client: bad prompts/get result: %w", err)
	}
	return r.Messages, nil
}

// Discover runs server/discover (modern era) and returns the description.
// On a legacy server it returns what initialize said.
func (c *Client) Discover(ctx context.Context) (*ServerDescription, error) {
	if err := c.ensureEra(ctx); err != nil {
		return nil, err
	}
	if c.Era() != EraModern {
		return c.server.Load(), nil
	}
	return c.discover(ctx)
}
