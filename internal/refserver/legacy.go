package refserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// Fixtures of the 2025-11-25 conformance suite, for a server that serves
// old clients through transport/legacy. They are written as 2026-07-28 tools:
// the sampling and elicitation ones answer input_required, which the
// legacy layer turns into the server→client request a 2025 client expects;
// test_tool_with_logging logs through Call.Log, which the legacy layer
// feeds with the session's logging/setLevel.

const (
	schemaSamplingArgs = `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`
	schemaMessageArgs  = `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`
	schemaUserInfo     = `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`
	schemaDefaults     = `{"type":"object","properties":{` +
		`"name":{"type":"string","default":"John Doe"},` +
		`"age":{"type":"integer","default":30},` +
		`"score":{"type":"number","default":95.5},` +
		`"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","default":true}}}`
	schemaEnums = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

func (r *refServer) legacyTools() []engine.Tool {
	return []engine.Tool{
		{
			Name:        "test_tool_with_logging",
			Description: "Sends three info log messages about 50 ms apart, then a text result",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				c.Log("info", "test_tool_with_logging", "Tool execution started")
				if err := pause(c, 50*time.Millisecond); err != nil {
					return err
				}
				c.Log("info", "test_tool_with_logging", "Tool processing data")
				if err := pause(c, 50*time.Millisecond); err != nil {
					return err
				}
				c.Log("info", "test_tool_with_logging", "Tool execution completed")
				c.Text("Tool with logging executed successfully")
				return nil
			},
		},
		{
			Name:                       "test_sampling",
			Description:                "Asks the client's LLM to answer the prompt and returns its answer",
			InputSchema:                json.RawMessage(schemaSamplingArgs),
			RequiredClientCapabilities: []string{"sampling"},
			Handler: func(c *engine.Call) error {
				prompt, _ := c.ArgString("prompt")
				ans, ok, err := oneInput(c, "sample", askSampling(prompt, 100))
				if !ok || err != nil {
					return err
				}
				var res struct {
					Content mcp.Content `json:"content"`
				}
				_ = json.Unmarshal(ans, &res)
				c.Text("LLM response: " + res.Content.Text)
				return nil
			},
		},
		r.elicitTool("test_elicitation", "Asks the user for a username and an email address", json.RawMessage(schemaMessageArgs), "", schemaUserInfo, "User response: "),
		r.elicitTool("test_elicitation_sep1034_defaults", "Elicitation whose schema gives a default for every primitive type (SEP-1034)", schemaNoArgs, "Please review your profile", schemaDefaults, "Elicitation completed: "),
		r.elicitTool("test_elicitation_sep1330_enums", "Elicitation with the five enum schema forms (SEP-1330)", schemaNoArgs, "Please choose your options", schemaEnums, "Elicitation completed: "),
	}
}

// elicitTool builds a tool that elicits once with schema and reports the
// answer. message "" takes the message argument.
func (r *refServer) elicitTool(name, desc string, args json.RawMessage, message, schema, prefix string) engine.Tool {
	return engine.Tool{
		Name:                       name,
		Description:                desc,
		InputSchema:                args,
		RequiredClientCapabilities: []string{"elicitation"},
		Handler: func(c *engine.Call) error {
			msg := message
			if msg == "" {
				msg, _ = c.ArgString("message")
			}
			ans, ok, err := oneInput(c, "elicit", askElicit(msg, schema))
			if !ok || err != nil {
				return err
			}
			var res struct {
				Action  string          `json:"action"`
				Content json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(ans, &res)
			if len(res.Content) == 0 {
				res.Content = json.RawMessage(`{}`)
			}
			c.Text(fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, res.Content))
			return nil
		},
	}
}

// oneInput asks for one input (first round) or returns its answer (the
// retry). ok is false when the handler has answered input_required.
func oneInput(c *engine.Call, key string, ask mcp.InputRequest) (json.RawMessage, bool, error) {
	if raw, ok := c.ParamRaw("inputResponses"); ok {
		var in map[string]json.RawMessage
		if err := json.Unmarshal(raw, &in); err == nil {
			if a, ok := in[key]; ok {
				return a, true, nil
			}
		}
	}
	return nil, false, c.InputRequired(mcp.InputRequired{InputRequests: map[string]mcp.InputRequest{key: ask}})
}
