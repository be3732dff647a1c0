package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

type schemaInner struct {
	N int `json:"n" minimum:"0" maximum:"10"`
}

type schemaEmbedded struct {
	E string `json:"e,omitempty"`
}

// schemaAll has a field of every kind the generator knows.
type schemaAll struct {
	schemaEmbedded
	Text  string          `json:"text" jsonschema:"the text" minLength:"1" maxLength:"64"`
	Mode  string          `json:"mode,omitempty" enum:"fast,exact"`
	Ptr   *int            `json:"ptr"`
	List  []string        `json:"list" enum:"a,b" minItems:"1"`
	Map   map[string]int  `json:"map,omitempty"`
	When  time.Time       `json:"when"`
	Raw   json.RawMessage `json:"raw,omitempty"`
	Any   any             `json:"any,omitzero"`
	Inner schemaInner     `json:"inner"`
	Many  []schemaInner   `json:"many,omitempty"`
	Small uint8           `json:"small,omitempty"`
	Bytes []byte          `json:"bytes,omitempty"`
	Quote int             `json:"quote,string,omitempty"`
	Pair  [2]float64      `json:"pair,omitempty"`
	Pat   string          `json:"pat,omitempty" pattern:"^[a-z]+$"`
	hide  int             //lint:ignore U1000 an unexported field the generator must leave out
	Skip  int             `json:"-"`
	NoTag bool
}

// TestSchemaFor: the inferred schemas, exactly, for both sides.
func TestSchemaFor(t *testing.T) {
	const in = `{"type":"object","properties":{` +
		`"e":{"type":"string"},` +
		`"text":{"type":"string","description":"the text","minLength":1,"maxLength":64},` +
		`"mode":{"type":"string","enum":["fast","exact"]},` +
		`"ptr":{"type":["integer","null"]},` +
		`"list":{"type":%s,"items":{"type":"string","enum":["a","b"]},"minItems":1},` +
		`"map":{"type":"object","additionalProperties":{"type":"integer"}},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"raw":{},"any":{},` +
		`"inner":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10}},"required":["n"],"additionalProperties":false},` +
		`"many":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10}},"required":["n"],"additionalProperties":false}},` +
		`"small":{"type":"integer","minimum":0,"maximum":255},` +
		`"bytes":{"type":"string","contentEncoding":"base64"},` +
		`"quote":{"type":"string"},` +
		`"pair":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":2},` +
		`"pat":{"type":"string","pattern":"^[a-z]+$"},` +
		`"NoTag":{"type":"boolean"}},` +
		`"required":["text","list","when","inner","NoTag"],"additionalProperties":false}`
	for mode, list := range map[schemaMode]string{schemaInput: `"array"`, schemaOutput: `["array","null"]`} {
		got, err := schemaFor(reflect.TypeFor[schemaAll](), mode)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(in, "%s", list, 1)
		if string(got) != want {
			t.Errorf("mode %d:\ngot  %s\nwant %s", mode, got, want)
		}
		if _, err := compileArgSchema(got); err != nil {
			t.Errorf("mode %d: does not compile: %v", mode, err)
		}
	}
	// The echo shape is flat (checked on the raw bytes) and closed.
	type echoIn struct {
		Text string `json:"text" jsonschema:"the text to return"`
	}
	sch, err := schemaFor(reflect.TypeFor[echoIn](), schemaInput)
	if err != nil {
		t.Fatal(err)
	}
	a, err := compileArgSchema(sch)
	if err != nil || a.flat == nil || !a.flat.closed {
		t.Fatalf("%s: not flat and closed (%v)", sch, err)
	}
}

// TestSchemaForRefuses: what has no JSON Schema is refused at
// registration, with the field named.
func TestSchemaForRefuses(t *testing.T) {
	type cycle struct {
		Next []cycle `json:"next"`
	}
	type badEnum struct {
		N int `json:"n" enum:"one"`
	}
	type badMin struct {
		N int `json:"n" minimum:"low"`
	}
	type badPattern struct {
		S string `json:"s" pattern:"(?<=x)"`
	}
	type badItems struct {
		S string `json:"s" minItems:"1"`
	}
	type fn struct {
		F func() `json:"f"`
	}
	for i, tc := range []struct {
		t    reflect.Type
		want string
	}{
		0: {reflect.TypeFor[cycle](), "refers to itself"},
		1: {reflect.TypeFor[badEnum](), "enum value"},
		2: {reflect.TypeFor[badMin](), "minimum"},
		3: {reflect.TypeFor[badPattern](), "pattern"},
		4: {reflect.TypeFor[badItems](), "minItems"},
		5: {reflect.TypeFor[fn](), "field F"},
		6: {reflect.TypeFor[string](), "not a struct"},
		7: {reflect.TypeFor[[]int](), "not a struct"},
		8: {reflect.TypeFor[time.Time](), "not a struct"},
		9: {reflect.TypeFor[map[int]chan int](), "no JSON form"},
	} {
		_, err := schemaFor(tc.t, schemaInput)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d: %s: err %v, want %q", i, tc.t, err, tc.want)
		}
	}
}

type greetIn struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty" minimum:"1" maximum:"3"`
	Tone  string `json:"tone,omitempty" enum:"warm,dry"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
	Count    int    `json:"count"`
}

// plainOut reads as its text, not its JSON.
type plainOut struct {
	Text string `json:"text"`
}

func (o plainOut) AppendResultText(dst []byte) []byte { return append(dst, o.Text...) }

type toolResult struct {
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeToolResult(t testing.TB, b []byte) toolResult {
	t.Helper()
	var r toolResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reply %s: %v", b, err)
	}
	return r
}

// TestTypedTool: schemas inferred and listed, arguments checked then
// decoded, Out as structuredContent and as text, handler errors as for
// untyped tools; bad arguments never reach the handler and are counted.
func TestTypedTool(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := 0
	err := AddTool(s, Tool{Name: "greet", Description: "Greets"}, func(c *Call, in greetIn) (greetOut, error) {
		ran++
		switch in.Name {
		case "fail":
			return greetOut{}, errors.New("no greeting for fail")
		case "rpc":
			return greetOut{}, codec.NewError(codec.CodeInvalidParams, "Invalid params: rpc")
		case "self":
			c.Text("set by the handler")
			return greetOut{}, nil
		}
		n := max(in.Times, 1)
		return greetOut{Greeting: strings.Repeat("hello "+in.Name+" ", n), Count: n}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "plain", Inline: true}, func(c *Call, in plainOut) (plainOut, error) {
		return in, nil
	}); err != nil {
		t.Fatal(err)
	}

	list := rpc(t, s, "tools/list", "").frame
	for _, want := range []string{
		`"inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"who to greet"},"times":{"type":"integer","minimum":1,"maximum":3},"tone":{"type":"string","enum":["warm","dry"]}},"required":["name"],"additionalProperties":false}`,
		`"outputSchema":{"type":"object","properties":{"greeting":{"type":"string"},"count":{"type":"integer"}},"required":["greeting","count"],"additionalProperties":false}`,
	} {
		if !bytes.Contains(list, []byte(want)) {
			t.Errorf("tools/list lacks %s:\n%s", want, list)
		}
	}

	r := decodeToolResult(t, runToolCall(t, s, "greet", `{"name":"Ada","times":2}`))
	if r.Error != nil || r.Result.IsError || string(r.Result.Structured) != `{"greeting":"hello Ada hello Ada ","count":2}` ||
		len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" || r.Result.Content[0].Text != string(r.Result.Structured) {
		t.Fatalf("greet: %+v %+v", r.Error, r.Result)
	}
	// An escaped string takes sonic's path, with the same result.
	r = decodeToolResult(t, runToolCall(t, s, "greet", `{"name":"A\u0064a"}`))
	if r.Error != nil || string(r.Result.Structured) != `{"greeting":"hello Ada ","count":1}` {
		t.Fatalf("greet escaped: %+v %+v", r.Error, r.Result)
	}
	r = decodeToolResult(t, runToolCall(t, s, "plain", `{"text":"a \"quoted\" line"}`))
	if r.Error != nil || r.Result.Content[0].Text != `a "quoted" line` || string(r.Result.Structured) != `{"text":"a \"quoted\" line"}` {
		t.Fatalf("plain: %+v %+v", r.Error, r.Result)
	}
	r = decodeToolResult(t, runToolCall(t, s, "greet", `{"name":"fail"}`))
	if r.Error != nil || !r.Result.IsError || r.Result.Content[0].Text != "no greeting for fail" || r.Result.Structured != nil {
		t.Fatalf("plain error: %+v %+v", r.Error, r.Result)
	}
	r = decodeToolResult(t, runToolCall(t, s, "greet", `{"name":"rpc"}`))
	if r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("codec error: %+v %+v", r.Error, r.Result)
	}
	r = decodeToolResult(t, runToolCall(t, s, "greet", `{"name":"self"}`))
	if r.Error != nil || r.Result.Content[0].Text != "set by the handler" || r.Result.Structured != nil {
		t.Fatalf("handler's own result: %+v %+v", r.Error, r.Result)
	}

	before := ran
	for i, tc := range []struct{ args, want string }{
		0: {`{}`, "Invalid arguments: arguments.name: required"},
		1: {`{"name":7}`, "Invalid arguments: arguments.name: expected string, got number"},
		2: {`{"name":"x","Name":"y"}`, "Invalid arguments: arguments.Name: not allowed"},
		3: {`{"name":"x","times":9}`, "Invalid arguments: arguments.times: must be at most 3"},
		4: {`{"name":"x","tone":"loud"}`, `Invalid arguments: arguments.tone: must be one of "warm", "dry"`},
		5: {`{"times":"2","extra":[1]}`, "Invalid arguments: arguments.extra: not allowed\narguments.name: required\narguments.times: expected integer, got string"},
	} {
		r := decodeToolResult(t, runToolCall(t, s, "greet", tc.args))
		if r.Error != nil || !r.Result.IsError || r.Result.Content[0].Text != tc.want {
			t.Errorf("%d: %s: got %+v %+v, want %q", i, tc.args, r.Error, r.Result, tc.want)
		}
	}
	if ran != before {
		t.Errorf("the handler ran %d times for bad arguments", ran-before)
	}
	if got := s.Stats().InvalidArguments.Load(); got != 6 {
		t.Errorf("InvalidArguments = %d, want 6", got)
	}
}

// TestTypedDecodeFailure: with a schema given by hand that lets through
// what In cannot hold, the decode failure is the same tool error.
func TestTypedDecodeFailure(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := false
	if err := AddTool(s, Tool{Name: "n", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(c *Call, in struct {
		N int8 `json:"n"`
	}) (greetOut, error) {
		ran = true
		return greetOut{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := decodeToolResult(t, runToolCall(t, s, "n", `{"n":"S3CR3T"}`))
	if r.Error != nil || !r.Result.IsError || r.Result.Content[0].Text != "Invalid arguments: arguments.n: expected integer, got string" {
		t.Fatalf("got %+v %+v", r.Error, r.Result)
	}
	if ran || s.Stats().InvalidArguments.Load() != 1 {
		t.Fatalf("ran %v, counted %d", ran, s.Stats().InvalidArguments.Load())
	}
}

// TestTypedOutputValidated: with ValidateOutput a result that breaks its
// outputSchema is never sent: -32603, logged, counted.
func TestTypedOutputValidated(t *testing.T) {
	var logs bytes.Buffer
	s := New(Config{ValidateOutput: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer func() { _ = s.Shutdown(context.Background()) }()
	type out struct {
		Score int `json:"score" maximum:"100"`
	}
	if err := AddTool(s, Tool{Name: "score"}, func(c *Call, in struct {
		N int `json:"n"`
	}) (out, error) {
		return out{Score: in.N}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// An author's own outputSchema that the Go type can break otherwise.
	if err := AddTool(s, Tool{Name: "map", OutputSchema: json.RawMessage(`{"type":"object","required":["ok"]}`)},
		func(c *Call, in struct{}) (map[string]int, error) { return map[string]int{"other": 1}, nil }); err != nil {
		t.Fatal(err)
	}
	if r := decodeToolResult(t, runToolCall(t, s, "score", `{"n":50}`)); r.Error != nil || string(r.Result.Structured) != `{"score":50}` {
		t.Fatalf("valid: %+v %+v", r.Error, r.Result)
	}
	for _, tc := range []struct{ tool, args string }{{"score", `{"n":101}`}, {"map", `{}`}} {
		r := decodeToolResult(t, runToolCall(t, s, tc.tool, tc.args))
		if r.Error == nil || r.Error.Code != -32603 || r.Result != nil {
			t.Fatalf("%s: got %+v %+v", tc.tool, r.Error, r.Result)
		}
	}
	if got := s.Stats().InvalidOutputs.Load(); got != 2 {
		t.Errorf("InvalidOutputs = %d, want 2", got)
	}
	if !strings.Contains(logs.String(), "result.score: must be at most 100") || !strings.Contains(logs.String(), "result.ok: required") {
		t.Errorf("logs:\n%s", logs.String())
	}
	// Off (the default), the result is not checked.
	s2 := New(Config{})
	defer func() { _ = s2.Shutdown(context.Background()) }()
	if err := AddTool(s2, Tool{Name: "map", OutputSchema: json.RawMessage(`{"type":"object","required":["ok"]}`)},
		func(c *Call, in struct{}) (map[string]int, error) { return map[string]int{"other": 1}, nil }); err != nil {
		t.Fatal(err)
	}
	if r := decodeToolResult(t, runToolCall(t, s2, "map", `{}`)); r.Error != nil {
		t.Fatalf("unchecked: %+v", r.Error)
	}
}

// TestTypedRegistration: what cannot be a typed tool or prompt is refused.
func TestTypedRegistration(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := AddTool[string, greetOut](s, Tool{Name: "x"}, func(c *Call, in string) (greetOut, error) { return greetOut{}, nil }); err == nil || !strings.Contains(err.Error(), "input") {
		t.Errorf("string In: %v", err)
	}
	if err := AddTool[greetIn, []int](s, Tool{Name: "x"}, func(c *Call, in greetIn) ([]int, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "output") {
		t.Errorf("slice Out: %v", err)
	}
	if err := AddTool[greetIn, greetOut](s, Tool{Name: "x"}, nil); err == nil {
		t.Error("nil handler accepted")
	}
	// Out as an interface: no outputSchema; the value must still be an object.
	if err := AddTool(s, Tool{Name: "anyout"}, func(c *Call, in struct {
		Obj bool `json:"obj,omitempty"`
	}) (any, error) {
		if in.Obj {
			return map[string]int{"a": 1}, nil
		}
		return 5, nil
	}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rpc(t, s, "tools/list", "").frame, []byte(`"outputSchema"`)) {
		t.Error("an interface Out got an outputSchema")
	}
	if r := decodeToolResult(t, runToolCall(t, s, "anyout", `{"obj":true}`)); r.Error != nil || string(r.Result.Structured) != `{"a":1}` {
		t.Errorf("object: %+v", r.Error)
	}
	if r := decodeToolResult(t, runToolCall(t, s, "anyout", `{}`)); r.Error == nil || r.Error.Code != -32603 {
		t.Errorf("not an object: %+v", r)
	}
	type intArg struct {
		N int `json:"n"`
	}
	if err := AddPrompt(s, Prompt{Name: "p"}, func(c *Call, in intArg) (mcp.PromptResult, error) { return mcp.PromptResult{}, nil }); err == nil {
		t.Error("a prompt with an int argument accepted")
	}
}

// runPrompt runs prompts/get name with the raw arguments (omitted when "").
func runPrompt(t testing.TB, s *Server, name, args string) []byte {
	t.Helper()
	return runNamed(t, s, "prompts/get", name, args)
}

// TestPromptArguments: a prompt's declared arguments are enforced for
// untyped and typed prompts alike — required present, declared ones
// strings — with -32602 naming them, before the handler runs.
func TestPromptArguments(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := 0
	if err := s.AddPrompt(Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "name", Required: true}, {Name: "style"}},
		Handler: func(c *Call) error {
			ran++
			name, _ := c.ArgString("name")
			return c.Return(mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Please greet " + name + " warmly.")}}})
		}}); err != nil {
		t.Fatal(err)
	}
	type greetArgs struct {
		Name  string  `json:"name" jsonschema:"who to greet"`
		Style *string `json:"style"`
	}
	if err := AddPrompt(s, Prompt{Name: "typed"}, func(c *Call, in greetArgs) (mcp.PromptResult, error) {
		ran++
		style := "warmly"
		if in.Style != nil {
			style = *in.Style
		}
		return mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Please greet " + in.Name + " " + style + ".")}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if prompts := rpc(t, s, "prompts/list", "").frame; !bytes.Contains(prompts, []byte(`"name":"typed","arguments":[{"name":"name","description":"who to greet","required":true},{"name":"style"}]`)) {
		t.Errorf("prompts/list: %s", prompts)
	}
	for _, name := range []string{"greet", "typed"} {
		for i, tc := range []struct{ args, want string }{
			0: {`{"name":"Ada"}`, ""},
			1: {``, "Invalid arguments: arguments.name: required"},
			2: {`{}`, "Invalid arguments: arguments.name: required"},
			3: {`{"name":5}`, "Invalid arguments: arguments.name: expected string, got number"},
			4: {`{"style":true}`, "Invalid arguments: arguments.name: required; arguments.style: expected string, got boolean"},
			5: {`["Ada"]`, "Invalid params: arguments must be a JSON object"},
		} {
			before := ran
			r := decodeToolResult(t, runPrompt(t, s, name, tc.args))
			if tc.want == "" {
				if r.Error != nil || ran != before+1 {
					t.Errorf("%s %d: %+v", name, i, r.Error)
				}
				continue
			}
			if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != tc.want || ran != before {
				t.Errorf("%s %d: got %+v (ran %v), want %q", name, i, r.Error, ran != before, tc.want)
			}
		}
	}
	if got := s.Stats().InvalidArguments.Load(); got != 10 {
		t.Errorf("InvalidArguments = %d, want 10", got)
	}
}

type flatOrdered struct {
	A string `json:"a"`
	B int    `json:"b"`
}

type flatReversed struct {
	B int    `json:"b"`
	A string `json:"a"`
}

// TestFlatMapIdentity: a typed tool decodes from its flat check's scan
// in place when both list the names in one order, and through the map
// otherwise; either way it gives what scanning the arguments again gives.
func TestFlatMapIdentity(t *testing.T) {
	args := []byte(`{"b":7,"a":"x"}`)
	for _, tc := range []struct {
		typ      reflect.Type
		identity bool
	}{{reflect.TypeFor[flatOrdered](), true}, {reflect.TypeFor[flatReversed](), false}} {
		fc := newFlatCodec(tc.typ)
		sch, err := schemaFor(tc.typ, schemaInput)
		if err != nil {
			t.Fatal(err)
		}
		a, err := compileArgSchema(sch)
		if err != nil || a.flat == nil || fc == nil {
			t.Fatalf("%s is not flat: %v", tc.typ, err)
		}
		m := fc.mapFrom(a.flat)
		if m.idx == nil || m.identity != tc.identity {
			t.Fatalf("%s: idx %v identity %v, want identity %v", tc.typ, m.idx, m.identity, tc.identity)
		}
		var vals [maxFlat][]byte
		if e, scanned := a.checkScan(args, &vals); !scanned || e != nil {
			t.Fatalf("%s: check %v scanned %v", tc.typ, e, scanned)
		}
		from, again := reflect.New(tc.typ), reflect.New(tc.typ)
		if !fc.decodeScanned(m, &vals, from.UnsafePointer(), nil, false) || !fc.decode(args, again.UnsafePointer(), nil) {
			t.Fatalf("%s: not decoded", tc.typ)
		}
		if !reflect.DeepEqual(from.Interface(), again.Interface()) {
			t.Fatalf("%s: from the scan %+v, again %+v", tc.typ, from.Elem(), again.Elem())
		}
	}
}

// TestTypedStringsOutliveCall: the strings a typed tool's arguments decode
// to are the handler's to keep — those carved from the Call's chunk are
// never overwritten by later calls (a chunk that is full is replaced, not
// reused), whatever their length, and one buffer reused for every message
// (as a transport reuses its read buffer) changes none of them.
func TestTypedStringsOutliveCall(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	var kept []string
	if err := AddTool(s, Tool{Name: "echo", Inline: true}, func(c *Call, in benchEchoIn) (benchEchoOut, error) {
		kept = append(kept, in.Text)
		return benchEchoOut(in), nil
	}); err != nil {
		t.Fatal(err)
	}
	sc := NewScope(s, "")
	var want []string
	buf := make([]byte, 0, 512)
	for i := range 3 * strChunkSize / 8 { // several chunks' worth
		text := strings.Repeat(strconv.Itoa(i%10), 1+i%(strChunkMax+8))
		want = append(want, text)
		buf = append(buf[:0], `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+text+`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`...)
		rep := &nopReply{}
		serve(t, sc, buf, rep)
		if rep.n != 1 {
			t.Fatalf("call %d: %d replies", i, rep.n)
		}
	}
	for i := range want {
		if kept[i] != want[i] {
			t.Fatalf("call %d's string reads %q after later calls, want %q", i, kept[i], want[i])
		}
	}
}
