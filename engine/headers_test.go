package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestHeaderBindings(t *testing.T) { // PARAM-02, PARAM-04
	cases := []struct {
		schema  string
		want    string // "Header@path:type;..." in order
		wantErr string
	}{
		// 0: EXAMPLES.md's execute_sql tool.
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},"dry_run":{"type":"boolean","x-mcp-header":"DryRun"},"query":{"type":"string"}}}`,
			"Mcp-Param-DryRun@dry_run:boolean;Mcp-Param-Priority@priority:integer;Mcp-Param-Region@region:string", ""},
		// 1: nesting through properties is allowed.
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}`, "Mcp-Param-B@a.b:string", ""},
		// 2: no annotations.
		{`{"type":"object"}`, "", ""},
		// 3-9: invalid tool definitions.
		{`{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`, "", "type"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "", "reachable"},
		{`{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "", "reachable"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "", "token"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`, "", "token"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, "", "twice"},
		{`{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, "", "reachable"},
	}
	for i, tc := range cases {
		b, err := headerBindings(json.RawMessage(tc.schema))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("%d: err %v, want %q", i, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		var parts []string
		for _, x := range b {
			parts = append(parts, x.Header+"@"+strings.Join(x.Path, ".")+":"+x.Type)
		}
		if got := strings.Join(parts, ";"); got != tc.want {
			t.Fatalf("%d: got %s, want %s", i, got, tc.want)
		}
	}
	s := New(Options{})
	defer func() { _ = s.Shutdown(t.Context()) }()
	err := s.AddTool(Tool{Name: "bad", InputSchema: json.RawMessage(cases[3].schema), Handler: func(c *Call) error { return nil }})
	if err == nil {
		t.Fatal("AddTool accepted an invalid x-mcp-header")
	}
}
