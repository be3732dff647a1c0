package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseHeaderBindings(t *testing.T) { // PARAM-02, PARAM-04
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
		// 2, 3: no annotations.
		{`{"type":"object"}`, "", ""},
		{`{"type":"object","properties":{"plain":{"type":"string"}}}`, "", ""},
		// 4: a property named x-mcp-header is a property, not an annotation.
		{`{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, "", ""},
		// 5-: invalid tool definitions.
		{`{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`, "", "type"},
		{`{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}`, "", "type"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "", "reachable"},
		{`{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "", "reachable"},
		{`{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "", "reachable"},
		{`{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`, "", "reachable"},
		{`{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`, "", "reachable"},
		{`{"type":"string","x-mcp-header":"Root"}`, "", "reachable"},
		{`{"type":"object","properties":[{"type":"string","x-mcp-header":"A"}]}`, "", "reachable"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "", "token"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`, "", "token"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad\r\nName"}}}`, "", "token"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`, "", "token"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, "", "twice"},
		{`{"type":"object","properties":{"a":{"x-mcp-header":`, "", "not JSON"},
	}
	for i, tc := range cases {
		b, err := ParseHeaderBindings(json.RawMessage(tc.schema))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%d: err %v, want %q", i, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%d: %v", i, err)
			continue
		}
		var parts []string
		for _, x := range b {
			parts = append(parts, x.Header+"@"+strings.Join(x.Path, ".")+":"+x.Type)
		}
		if got := strings.Join(parts, ";"); got != tc.want {
			t.Errorf("%d: got %s, want %s", i, got, tc.want)
		}
	}
}

// FuzzParseHeaderBindings: any input is answered with bindings or an
// error, never a panic; every binding returned is valid (PARAM-02).
func FuzzParseHeaderBindings(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`))
	f.Add([]byte(`{"properties":{"a":{"properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}}`))
	f.Add([]byte(`{"anyOf":[{"x-mcp-header":"A"}]}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		bs, err := ParseHeaderBindings(schema)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, b := range bs {
			low := strings.ToLower(b.Name)
			if b.Name == "" || seen[low] || b.Header != "Mcp-Param-"+b.Name || len(b.Path) == 0 {
				t.Fatalf("invalid binding %+v from %q", b, schema)
			}
			seen[low] = true
			switch b.Type {
			case "string", "integer", "boolean":
			default:
				t.Fatalf("binding of type %q from %q", b.Type, schema)
			}
		}
	})
}

func TestToolResultText(t *testing.T) {
	r := ToolResult{Content: []Content{TextContent("a"), {Type: "image", Data: "AA=="}, TextContent("b")}}
	if got := r.Text(); got != "ab" {
		t.Fatalf("Text() = %q", got)
	}
}

// TestDecode: StructuredContent and InputRequest.Params decode the same
// whether they hold a Go value (server side) or raw JSON (client side),
// with exact-case keys.
func TestDecode(t *testing.T) {
	type out struct {
		Sum int `json:"sum"`
	}
	for i, v := range []any{map[string]int{"sum": 3}, json.RawMessage(`{"sum":3}`), out{Sum: 3}} {
		var o out
		r := ToolResult{StructuredContent: v}
		if err := r.DecodeStructured(&o); err != nil || o.Sum != 3 {
			t.Fatalf("%d: %+v %v", i, o, err)
		}
	}
	var o out
	if err := (&ToolResult{StructuredContent: json.RawMessage(`{"SUM":3}`)}).DecodeStructured(&o); err != nil || o.Sum != 0 {
		t.Fatalf("a case-variant key was matched: %+v %v", o, err)
	}
	if err := (&ToolResult{}).DecodeStructured(&o); err != ErrNoStructuredContent {
		t.Fatalf("no structuredContent: %v", err)
	}
	var p struct {
		Message string `json:"message"`
	}
	if err := (InputRequest{Method: "elicitation/create", Params: json.RawMessage(`{"message":"hi"}`)}).DecodeParams(&p); err != nil || p.Message != "hi" {
		t.Fatalf("%+v %v", p, err)
	}
	if err := (InputRequest{Method: "roots/list"}).DecodeParams(&p); err != nil {
		t.Fatal(err)
	}
}
