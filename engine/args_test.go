package engine

import (
	"context"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

const testMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// callTool runs tools/call name with the raw arguments (omitted when "")
// through Begin/Check/Run and returns the response line.
func runToolCall(t testing.TB, s *Server, name, args string) []byte {
	t.Helper()
	p := `{"name":` + strconv.Quote(name) + `,`
	if args != "" {
		p += `"arguments":` + args + `,`
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + p + testMeta + `}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatalf("peek %s: %v", msg, err)
	}
	rep := &capture{done: make(chan struct{})}
	r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		t.Fatalf("check: %s", e.Message)
	}
	r.Run()
	<-rep.done
	return rep.reply
}

type rpcReply struct {
	Result *struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeReply(t testing.TB, b []byte) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reply %s: %v", b, err)
	}
	return r
}

// TestToolArgumentsValidated: the cases — a missing required
// argument no longer reaches the handler as a zero value, a wrong type is a
// one-line -32602 naming the argument and the rule, never echoing the
// input — and the rest of the common keywords.
func TestToolArgumentsValidated(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := 0
	add := func(name, schema string) {
		t.Helper()
		if err := s.AddTool(Tool{Name: name, InputSchema: json.RawMessage(schema), Handler: func(c *Call) error {
			ran++
			c.Text("ran")
			return nil
		}}); err != nil {
			t.Fatalf("AddTool %s: %v", name, err)
		}
	}
	add("ab", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)
	add("nested", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10}}}}}}`)
	add("closed", `{"type":"object","properties":{"x":{"type":"string","maxLength":3,"pattern":"^[a-z]+$"}},"additionalProperties":false}`)
	add("enum", `{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}`)
	add("any", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`)
	add("draft7", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"integer","exclusiveMinimum":1}}}`)
	add("noargs", `{"type":"object","properties":{}}`)
	add("default", ``)

	secret := "S3CR3T-input-value"
	for i, tc := range []struct {
		tool, args string
		ok         bool
		want       string // exact message when !ok
	}{
		0:  {"ab", `{"a":1,"b":2}`, true, ""},
		1:  {"ab", `{"a":1}`, false, "Invalid params: arguments.b is required"},
		2:  {"ab", ``, false, "Invalid params: arguments.a is required (and 1 more)"},
		3:  {"ab", `{"a":"` + secret + `","b":2}`, false, "Invalid params: arguments.a: want integer, got string (type)"},
		4:  {"ab", `{"a":1.5,"b":2}`, false, "Invalid params: arguments.a: want integer, got number (type)"},
		5:  {"ab", `{"a":1.0,"b":2}`, true, ""},
		6:  {"ab", `[1,2]`, false, "Invalid params: arguments: want object, got array (type)"},
		7:  {"nested", `{"items":[{"n":1},{"n":2},{"n":11}]}`, false, "Invalid params: arguments.items[2].n: must be <= 10 (maximum)"},
		8:  {"nested", `{"items":[{"n":-1}]}`, false, "Invalid params: arguments.items[0].n: must be >= 0 (minimum)"},
		9:  {"closed", `{"x":"ab","zz":1,"yy":2}`, false, "Invalid params: arguments.yy is not allowed (additionalProperties)"},
		10: {"closed", `{"x":"abcd"}`, false, "Invalid params: arguments.x: must be at most 3 characters long (maxLength)"},
		11: {"closed", `{"x":"A1"}`, false, "Invalid params: arguments.x: does not match the pattern (pattern)"},
		12: {"enum", `{"mode":"` + secret + `"}`, false, "Invalid params: arguments.mode: not one of the allowed values (enum)"},
		13: {"enum", `{"mode":"slow"}`, true, ""},
		14: {"any", `{"v":true}`, false, "Invalid params: arguments.v: matches none of the alternatives (anyOf)"},
		15: {"draft7", `{"a":1}`, false, "Invalid params: arguments.a: must be > 1 (exclusiveMinimum)"},
		16: {"noargs", `{"anything":[1]}`, true, ""},
		17: {"noargs", `"str"`, false, "Invalid params: arguments: want object, got string (type)"},
		18: {"default", ``, true, ""},
		19: {"closed", `{"we\nird":1}`, false, `Invalid params: arguments["we\nird"] is not allowed (additionalProperties)`},
	} {
		before := ran
		r := decodeReply(t, runToolCall(t, s, tc.tool, tc.args))
		if tc.ok {
			if r.Error != nil || r.Result == nil || ran != before+1 {
				t.Errorf("%d: %s %s: want the handler to run, got %+v", i, tc.tool, tc.args, r.Error)
			}
			continue
		}
		if ran != before {
			t.Errorf("%d: the handler ran for invalid arguments", i)
		}
		if r.Error == nil {
			t.Errorf("%d: %s %s: no error", i, tc.tool, tc.args)
			continue
		}
		if r.Error.Code != int(codec.CodeInvalidParams) || r.Error.Message != tc.want {
			t.Errorf("%d: got %d %q, want -32602 %q", i, r.Error.Code, r.Error.Message, tc.want)
		}
		if strings.ContainsAny(r.Error.Message, "\n\r") || strings.Contains(r.Error.Message, secret) {
			t.Errorf("%d: message is not one line or echoes the input: %q", i, r.Error.Message)
		}
	}
	if got := s.Stats().InvalidArguments.Load(); got == 0 {
		t.Errorf("InvalidArguments = 0")
	}
}

// TestArgumentMessageBounded: a long member name is cut, and the whole
// message stays within maxArgMessage bytes.
func TestArgumentMessageBounded(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	long := strings.Repeat("k", 5000)
	if err := s.AddTool(Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","required":["` + long + `"]}`),
		Handler: func(c *Call) error { c.Text("x"); return nil }}); err != nil {
		t.Fatal(err)
	}
	r := decodeReply(t, runToolCall(t, s, "t", `{}`))
	if r.Error == nil || len(r.Error.Message) > maxArgMessage || !strings.HasPrefix(r.Error.Message, "Invalid params: arguments.kkkk") {
		t.Fatalf("got %+v", r.Error)
	}
}

// TestSkipValidation: the opt-out runs the handler whatever the arguments.
func TestSkipValidation(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := s.AddTool(Tool{Name: "t", SkipValidation: true,
		InputSchema: json.RawMessage(`{"type":"object","required":["a"]}`),
		Handler:     func(c *Call) error { c.Text("ran"); return nil }}); err != nil {
		t.Fatal(err)
	}
	if r := decodeReply(t, runToolCall(t, s, "t", `{}`)); r.Error != nil || r.Result == nil {
		t.Fatalf("got %+v", r.Error)
	}
}

// TestAddToolRefusesBadSchemas: the schema is compiled once, at AddTool.
func TestAddToolRefusesBadSchemas(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	h := func(c *Call) error { return nil }
	for i, tc := range []struct{ schema, wantErr string }{
		0: {`{"type":"objet"}`, "inputSchema"},
		1: {`{"type":"object","properties":{"a":{"minimum":"zero"}}}`, "inputSchema"},
		2: {`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, "inputSchema"},
		3: {`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "inputSchema"},
		4: {`{"type":"object","properties":{"a":{"pattern":"(?<=x)y"}}}`, "inputSchema"},
		5: {`[1]`, "not a JSON object"},
	} {
		err := s.AddTool(Tool{Name: "t", InputSchema: json.RawMessage(tc.schema), Handler: h})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%d: %s: err %v, want one line containing %q", i, tc.schema, err, tc.wantErr)
		}
	}
	// A local $ref resolves.
	if err := s.AddTool(Tool{Name: "t", Handler: h, InputSchema: json.RawMessage(
		`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`)}); err != nil {
		t.Fatal(err)
	}
}

// TestBindErrors: Bind's error is one line naming the argument and the JSON
// type wanted, never the decoder's diagnostic with a copy of the input.
func TestBindErrors(t *testing.T) {
	type in struct {
		N     int `json:"n"`
		Inner struct {
			List []int `json:"list"`
		} `json:"inner"`
		Text string `json:"text"`
	}
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := s.AddTool(Tool{Name: "bind", SkipValidation: true, Handler: func(c *Call) error {
		var v in
		return c.Bind(&v)
	}}); err != nil {
		t.Fatal(err)
	}
	secret := "S3CR3T"
	for i, tc := range []struct{ args, want string }{
		0: {`{"n":"` + secret + `"}`, "Invalid arguments: arguments.n: want integer, got string"},
		1: {`{"inner":{"list":[1,"` + secret + `"]}}`, "Invalid arguments: arguments.inner.list: want integer, got string"},
		2: {`{"n":1e400}`, "Invalid arguments: arguments.n: want integer, got number"},
		3: {`{"text":["` + secret + `"]}`, "Invalid arguments: arguments.text: want string, got array"},
	} {
		r := decodeReply(t, runToolCall(t, s, "bind", tc.args))
		if r.Error == nil || r.Error.Code != int(codec.CodeInvalidParams) || r.Error.Message != tc.want {
			t.Errorf("%d: got %+v, want %q", i, r.Error, tc.want)
		}
	}
}

// TestIntegral: JSON Schema's integer on number literals, as the schema
// library (math/big) decides it, including the exponents it refuses.
func TestIntegral(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "-0.0": true, "1.0": true, "1e2": true, "12.50e1": true, "1.5": false, "1e-1": false,
		"100e-2": true, "0e1000010": true, "1e1000000": true, "1e1000010": false, "1.5e-1000010": false,
	} {
		if got := integral([]byte(n)); got != want {
			t.Errorf("integral(%s) = %v, want %v", n, got, want)
		}
		var r big.Rat
		if _, ok := r.SetString(n); (ok && r.IsInt()) != want {
			t.Errorf("%s: math/big says integer %v, the table %v", n, ok && r.IsInt(), want)
		}
	}
}
