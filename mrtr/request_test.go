package mrtr_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
)

func encode(t *testing.T, r mcp.InputRequest) string {
	t.Helper()
	b, err := codec.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuilders: each builder encodes to the request the 2026-07-28 schema
// describes (ElicitRequest, CreateMessageRequest, ListRootsRequest),
// without jsonrpc or id (MRTR-03).
func TestBuilders(t *testing.T) {
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	temp, cost, speed := 0.2, 0.0, 0.9
	for i, v := range []struct {
		req  mcp.InputRequest
		want string
	}{
		0: {mrtr.Elicit("Deploy to prod?", schema),
			`{"method":"elicitation/create","params":{"mode":"form","message":"Deploy to prod?","requestedSchema":` + schema + `}}`},
		1: {mrtr.Elicit("Deploy?", json.RawMessage(schema)),
			`{"method":"elicitation/create","params":{"mode":"form","message":"Deploy?","requestedSchema":` + schema + `}}`},
		2: {mrtr.Elicit("Name?", map[string]any{"type": "object"}),
			`{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}}`},
		3: {mrtr.ElicitURL("Sign in to the bank", "https://bank.example/consent?id=1"),
			`{"method":"elicitation/create","params":{"mode":"url","message":"Sign in to the bank","url":"https://bank.example/consent?id=1"}}`},
		4: {mrtr.SampleText("What is the capital of France?", 100),
			`{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}}`},
		5: {mrtr.Sample(mrtr.SamplingRequest{
			Messages: []mrtr.SamplingMessage{
				mrtr.UserText("Summarise"),
				{Role: "assistant", Content: mcp.TextContent("Of what?")},
				{Role: "user", Content: mcp.Content{Type: "image", Data: "iVBORw0KGgo=", MimeType: "image/png"}},
			},
			MaxTokens:    50,
			SystemPrompt: "Be brief.",
			ModelPreferences: &mrtr.ModelPreferences{
				Hints:        []mrtr.ModelHint{{Name: "sonnet"}, {Name: "claude"}},
				CostPriority: &cost, SpeedPriority: &speed,
			},
			Temperature:    &temp,
			StopSequences:  []string{"\n\n"},
			IncludeContext: "none",
			Metadata:       json.RawMessage(`{"trace":"t1"}`),
			Tools:          []mcp.Tool{{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			ToolChoice:     &mrtr.ToolChoice{Mode: "auto"},
		}),
			`{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Summarise"}},` +
				`{"role":"assistant","content":{"type":"text","text":"Of what?"}},{"role":"user","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}],` +
				`"maxTokens":50,"systemPrompt":"Be brief.","modelPreferences":{"hints":[{"name":"sonnet"},{"name":"claude"}],"costPriority":0,"speedPriority":0.9},` +
				`"temperature":0.2,"stopSequences":["\n\n"],"includeContext":"none","metadata":{"trace":"t1"},` +
				`"tools":[{"name":"lookup","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"}}}`},
		6: {mrtr.ListRoots(), `{"method":"roots/list","params":{}}`},
	} {
		if got := encode(t, v.req); got != v.want {
			t.Errorf("%d:\n got %s\nwant %s", i, got, v.want)
		}
	}
}

// TestAllowed: what this request's clientCapabilities let a server ask
// (MRTR-04).
func TestAllowed(t *testing.T) {
	srv := newEngine(t)
	reqs := []mcp.InputRequest{
		0: mrtr.Elicit("form?", `{"type":"object","properties":{}}`),
		1: mrtr.ElicitURL("url?", "https://example.com"),
		2: mrtr.SampleText("hi", 10),
		3: mrtr.Sample(mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 10, ToolChoice: &mrtr.ToolChoice{Mode: "none"}}),
		4: mrtr.Sample(mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 10, IncludeContext: "thisServer"}),
		5: mrtr.ListRoots(),
		6: {Method: "elicitation/create", Params: json.RawMessage(`{"mode":"url","message":"m","url":"u"}`)}, // as a client decoded it
		7: {Method: "elicitation/create", Params: json.RawMessage(`{"mode":"carrier pigeon","message":"m"}`)},
		8: {Method: "ping"},
	}
	if err := srv.AddTool(engine.Tool{Name: "allowed", Handler: func(c *engine.Call) error {
		var b strings.Builder
		for _, r := range reqs {
			if mrtr.Allowed(c, r) {
				b.WriteByte('y')
			} else {
				b.WriteByte('-')
			}
		}
		c.Text(b.String())
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv, nil)
	for i, v := range []struct{ caps, want string }{
		0:  {`{}`, "---------"},
		1:  {`{"elicitation":{}}`, "y--------"}, // no mode named: form only
		2:  {`{"elicitation":{"form":{}}}`, "y--------"},
		3:  {`{"elicitation":{"url":{}}}`, "-y----y--"},
		4:  {`{"elicitation":{"form":{},"url":{}}}`, "yy----y--"},
		5:  {`{"sampling":{}}`, "--y------"},
		6:  {`{"sampling":{"tools":{}}}`, "--yy-----"},
		7:  {`{"sampling":{"context":{},"tools":{}}}`, "--yyy----"},
		8:  {`{"roots":{}}`, "-----y---"},
		9:  {`{"elicitation":null,"sampling":false,"roots":[]}`, "---------"},
		10: {`{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{}}`, "yyyyyyy--"},
	} {
		if got := c.doCaps("tools/call", `{"name":"allowed","arguments":{}}`, v.caps).text(t); got != v.want {
			t.Errorf("%d %s: %s, want %s", i, v.caps, got, v.want)
		}
	}
}
