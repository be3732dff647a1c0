package refserver

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// Names of the entries test_trigger_tool_change and test_trigger_prompt_change
// add and remove.
const (
	transientTool   = "test_transient_tool"
	transientPrompt = "test_transient_prompt"
)

// schemaNoArgs is the inputSchema of tools without arguments.
var schemaNoArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// schema2020 exercises the JSON Schema 2020-12 keywords the suite checks
// survive tools/list verbatim (SEP-1613, SEP-2106): $schema, $defs with an
// $anchor, additionalProperties, allOf/anyOf and if/then/else.
var schema2020 = json.RawMessage(`{` +
	`"$schema":"https://json-schema.org/draft/2020-12/schema",` +
	`"type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["city"]}},` +
	`"properties":{` +
	`"name":{"type":"string","minLength":1},` +
	`"address":{"$ref":"#/$defs/address"},` +
	`"contactMethod":{"type":"string","enum":["phone","email"]},` +
	`"phone":{"type":"string"},` +
	`"email":{"type":"string","format":"email"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},` +
	`"else":{"required":["email"]},` +
	`"additionalProperties":false}`)

// schemaHeader marks a string property with x-mcp-header (SEP-2243), so the
// HTTP binding mirrors it into Mcp-Param-Region.
var schemaHeader = json.RawMessage(`{"type":"object","properties":{` +
	`"region":{"type":"string","description":"Mirrored into the Mcp-Param-Region header","x-mcp-header":"Region"},` +
	`"count":{"type":"integer","description":"Not mirrored"}}}`)

func (r *refServer) conformanceTools() []engine.Tool {
	return []engine.Tool{
		{
			Name:        "test_simple_text",
			Description: "Returns one text content item",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				c.Text("This is a simple text response for testing.")
				return nil
			},
		},
		{
			Name:        "test_image_content",
			Description: "Returns one image content item (a 2x2 PNG)",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				return c.Return(mcp.ToolResult{Content: []mcp.Content{imageContent()}})
			},
		},
		{
			Name:        "test_audio_content",
			Description: "Returns one audio content item (a short WAV)",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				return c.Return(mcp.ToolResult{Content: []mcp.Content{
					{Type: "audio", Data: wavBase64(), MimeType: "audio/wav"},
				}})
			},
		},
		{
			Name:        "test_embedded_resource",
			Description: "Returns one embedded text/plain resource",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				return c.Return(mcp.ToolResult{Content: []mcp.Content{{
					Type: "resource",
					Resource: &mcp.ResourceContents{
						URI:      "test://embedded-resource",
						MimeType: "text/plain",
						Text:     "This is an embedded resource content.",
					},
				}}})
			},
		},
		{
			Name:        "test_multiple_content_types",
			Description: "Returns text, image and embedded resource content together",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				return c.Return(mcp.ToolResult{Content: []mcp.Content{
					mcp.TextContent("Multiple content types test:"),
					imageContent(),
					{Type: "resource", Resource: &mcp.ResourceContents{
						URI:      "test://mixed-content-resource",
						MimeType: "application/json",
						Text:     `{"test":"data","value":123}`,
					}},
				}})
			},
		},
		{
			Name:        "test_error_handling",
			Description: "Always fails: returns a tool result with isError true",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				c.ErrorText("This tool intentionally returns an error for testing")
				return nil
			},
		},
		{
			Name:        "test_tool_with_progress",
			Description: "Reports progress 0, 50 and 100 of 100 when the request carries a progressToken, then returns the token",
			InputSchema: schemaNoArgs,
			Handler:     r.toolWithProgress,
		},
		{
			Name:        "json_schema_2020_12_tool",
			Description: "Has an inputSchema using JSON Schema 2020-12 keywords ($schema, $defs, $anchor, allOf/anyOf, if/then/else, additionalProperties)",
			InputSchema: schema2020,
			Handler: func(c *engine.Call) error {
				args := c.Arguments()
				if args == nil {
					args = []byte("{}")
				}
				c.Text("json_schema_2020_12_tool called with " + string(args))
				return nil
			},
		},
		{
			Name:                       "test_missing_capability",
			Description:                "Requires the sampling client capability; without it the call is refused with -32021",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"sampling"},
			Handler: func(c *engine.Call) error {
				c.Text("The sampling capability was declared; the tool ran.")
				return nil
			},
		},
		{
			Name:        "test_streaming_elicitation",
			Description: "Streams only notifications (progress when asked for) before its result, never a server-to-client request",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				c.Progress(1, 2, "working")
				c.Progress(2, 2, "done")
				c.Text("Only notifications and the final result were sent on this stream.")
				return nil
			},
		},
		{
			Name:        "test_logging_tool",
			Description: "Logs one info message, delivered only when the request's _meta carries a logLevel",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				if c.Log("info", ServerName, "test_logging_tool executed") {
					c.Text("A log message was sent.")
				} else {
					c.Text("No log message was sent (no logLevel in _meta, or below it).")
				}
				return nil
			},
		},
		{
			Name:        "test_trigger_tool_change",
			Description: "Adds or removes the tool " + transientTool + ", so tools/list_changed fires on listen streams",
			InputSchema: schemaNoArgs,
			Handler:     r.triggerToolChange,
		},
		{
			Name:        "test_trigger_prompt_change",
			Description: "Adds or removes the prompt " + transientPrompt + ", so prompts/list_changed fires on listen streams",
			InputSchema: schemaNoArgs,
			Handler:     r.triggerPromptChange,
		},
		{
			Name:        "test_x_mcp_header",
			Description: "Has a string argument annotated x-mcp-header (mirrored into Mcp-Param-Region); returns it",
			InputSchema: schemaHeader,
			Handler: func(c *engine.Call) error {
				var in struct {
					Region string `json:"region"`
					Count  *int64 `json:"count"`
				}
				if err := c.Bind(&in); err != nil {
					return err
				}
				c.Text("region=" + in.Region)
				return nil
			},
		},
	}
}

func imageContent() mcp.Content {
	return mcp.Content{Type: "image", Data: pngBase64(), MimeType: "image/png"}
}

// progressStep is the pause between the fixture's progress steps: the
// suite waits ~50 ms between steps and counts the notifications (at least
// 3), so the pause is also just over the engine's ProgressInterval, which
// keeps the rate limiter from coalescing the steps.
func (r *refServer) progressStep() time.Duration {
	const base = 50 * time.Millisecond
	if iv := r.srv.Config().ProgressInterval; iv+5*time.Millisecond > base {
		return iv + 5*time.Millisecond
	}
	return base
}

func (r *refServer) toolWithProgress(c *engine.Call) error {
	step := r.progressStep()
	for i, v := range [...]float64{0, 50, 100} {
		if i > 0 {
			if err := pause(c, step); err != nil {
				return err
			}
		}
		c.Progress(v, 100, "Completed step "+strconv.Itoa(i+1)+" of 3")
	}
	tok := c.ProgressToken()
	switch {
	case tok == nil:
		c.Text("no progressToken")
	case tok[0] == '"':
		s, _ := codec.LookupString(c.Meta(), codec.MetaProgressToken)
		c.Text(s.String())
	default:
		c.TextBytes(tok)
	}
	return nil
}

// pause waits d or until the call is cancelled.
func pause(c *engine.Call, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.Done():
		return c.Err()
	}
}

func (r *refServer) triggerToolChange(c *engine.Call) error {
	if r.srv.RemoveTool(transientTool) {
		c.Text("tools list changed: removed " + transientTool)
		return nil
	}
	err := r.srv.AddTool(engine.Tool{
		Name:        transientTool,
		Description: "Transient tool toggled by test_trigger_tool_change",
		InputSchema: schemaNoArgs,
		Handler: func(c *engine.Call) error {
			c.Text("transient tool")
			return nil
		},
	})
	if err != nil {
		return err
	}
	c.Text("tools list changed: added " + transientTool)
	return nil
}

func (r *refServer) triggerPromptChange(c *engine.Call) error {
	if r.srv.RemovePrompt(transientPrompt) {
		c.Text("prompts list changed: removed " + transientPrompt)
		return nil
	}
	err := r.srv.AddPrompt(engine.Prompt{
		Name:        transientPrompt,
		Description: "Transient prompt toggled by test_trigger_prompt_change",
		Handler: func(c *engine.Call) error {
			return c.Return(mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("transient prompt")},
			}})
		},
	})
	if err != nil {
		return err
	}
	c.Text("prompts list changed: added " + transientPrompt)
	return nil
}
