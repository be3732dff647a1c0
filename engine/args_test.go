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

// runMessage peeks msg, a request, and runs it through
// Begin/Check/Run; it returns the response line.
func runMessage(t testing.TB, s *Server, msg []byte) []byte {
	t.Helper()
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

// runToolCall runs tools/call name with the raw arguments (omitted when "")
// through Begin/Check/Run and returns the response line.
func runToolCall(t testing.TB, s *Server, name, args string) []byte {
	t.Helper()
	return runNamed(t, s, "tools/call", name, args)
}

// runNamed runs method (tools/call, prompts/get) on name with the raw
// arguments (omitted when "") and returns the response line.
func runNamed(t testing.TB, s *Server, method, name, args string) []byte {
	t.Helper()
	p := `{"name":` + strconv.Quote(name) + `,`
	if args != "" {
		p += `"arguments":` + args + `,`
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + p + testMeta + `}}`)
	return runMessage(t, s, msg)
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

// TestToolArgumentsValidated: arguments that fail the schema never reach
// the handler and are answered with a tool result, isError true, whose
// text names each failing path and rule on a line of its own, never
// echoing the input (SEP-1303, TRANSPORTS.md §1.4); arguments that are not
// an object are still -32602.
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
	add("flatClosed", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)

	secret := "S3CR3T-input-value"
	const notObject = "Invalid params: arguments must be a JSON object"
	for i, tc := range []struct {
		tool, args string
		ok         bool
		want       string // exact text of the isError result, or the -32602 message
		rpc        bool   // a -32602 error, not an isError result
	}{
		0:  {"ab", `{"a":1,"b":2}`, true, "", false},
		1:  {"ab", `{"a":1}`, false, "Invalid arguments: arguments.b: required", false},
		2:  {"ab", ``, false, "Invalid arguments: arguments.a: required\narguments.b: required", false},
		3:  {"ab", `{"a":"` + secret + `","b":2}`, false, "Invalid arguments: arguments.a: expected integer, got string", false},
		4:  {"ab", `{"a":1.5,"b":2}`, false, "Invalid arguments: arguments.a: expected integer, got number", false},
		5:  {"ab", `{"a":1.0,"b":2}`, true, "", false},
		6:  {"ab", `[1,2]`, false, notObject, true},
		7:  {"nested", `{"items":[{"n":1},{"n":2},{"n":11}]}`, false, "Invalid arguments: arguments.items[2].n: must be at most 10", false},
		8:  {"nested", `{"items":[{"n":-1},{"n":"x"}]}`, false, "Invalid arguments: arguments.items[0].n: must be at least 0\narguments.items[1].n: expected integer, got string", false},
		9:  {"closed", `{"x":"ab","zz":1,"yy":2}`, false, "Invalid arguments: arguments.yy: not allowed\narguments.zz: not allowed", false},
		10: {"closed", `{"x":"abcd"}`, false, "Invalid arguments: arguments.x: must be at most 3 characters long", false},
		11: {"closed", `{"x":"A1"}`, false, `Invalid arguments: arguments.x: must match the pattern "^[a-z]+$"`, false},
		12: {"enum", `{"mode":"` + secret + `"}`, false, `Invalid arguments: arguments.mode: must be one of "fast", "slow"`, false},
		13: {"enum", `{"mode":"slow"}`, true, "", false},
		14: {"any", `{"v":true}`, false, "Invalid arguments: arguments.v: matches none of the allowed forms", false},
		15: {"draft7", `{"a":1}`, false, "Invalid arguments: arguments.a: must be greater than 1", false},
		16: {"noargs", `{"anything":[1]}`, true, "", false},
		17: {"noargs", `"str"`, false, notObject, true},
		18: {"default", ``, true, "", false},
		19: {"closed", `{"we\nird":1}`, false, `Invalid arguments: arguments["we\nird"]: not allowed`, false},
		20: {"flatClosed", `{"text":"a","more":1}`, false, "Invalid arguments: arguments.more: not allowed", false},
		21: {"flatClosed", `{"text":7}`, false, "Invalid arguments: arguments.text: expected string, got number", false},
		22: {"flatClosed", `{"text":"a"}`, true, "", false},
		23: {"default", `null`, false, notObject, true},
	} {
		before := ran
		r := decodeReply(t, runToolCall(t, s, tc.tool, tc.args))
		if tc.ok {
			if r.Error != nil || r.Result == nil || r.Result.IsError || ran != before+1 {
				t.Errorf("%d: %s %s: want the handler to run, got %+v", i, tc.tool, tc.args, r.Error)
			}
			continue
		}
		if ran != before {
			t.Errorf("%d: the handler ran for invalid arguments", i)
		}
		if tc.rpc {
			if r.Error == nil || r.Error.Code != int(codec.CodeInvalidParams) || r.Error.Message != tc.want {
				t.Errorf("%d: got %+v, want -32602 %q", i, r.Error, tc.want)
			}
			continue
		}
		if r.Error != nil || r.Result == nil || !r.Result.IsError || len(r.Result.Content) != 1 {
			t.Errorf("%d: %s %s: want an isError result, got %+v %+v", i, tc.tool, tc.args, r.Error, r.Result)
			continue
		}
		got := r.Result.Content[0].Text
		if got != tc.want {
			t.Errorf("%d: got %q, want %q", i, got, tc.want)
		}
		if strings.Contains(got, secret) {
			t.Errorf("%d: the text echoes the input: %q", i, got)
		}
	}
	if got := s.Stats().InvalidArguments.Load(); got != 18 {
		t.Errorf("InvalidArguments = %d, want 18", got)
	}
}

// TestArgumentMessageBounded: a long member name is cut, every line stays
// within maxArgMessage bytes, and at most maxArgPaths paths are listed.
func TestArgumentMessageBounded(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	long := strings.Repeat("k", 5000)
	var req []string
	for i := range 20 {
		req = append(req, `"`+long+strconv.Itoa(i)+`"`)
	}
	if err := s.AddTool(Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","required":[` + strings.Join(req, ",") + `]}`),
		Handler: func(c *Call) error { c.Text("x"); return nil }}); err != nil {
		t.Fatal(err)
	}
	r := decodeReply(t, runToolCall(t, s, "t", `{}`))
	if r.Result == nil || !r.Result.IsError {
		t.Fatalf("got %+v", r.Error)
	}
	lines := strings.Split(r.Result.Content[0].Text, "\n")
	if len(lines) != maxArgPaths+1 || lines[maxArgPaths] != "… and 12 more" || !strings.HasPrefix(lines[0], "Invalid arguments: arguments.kkkk") {
		t.Fatalf("got %q", lines)
	}
	for _, l := range lines {
		if len(l) > maxArgMessage {
			t.Fatalf("line of %d bytes", len(l))
		}
	}
}

// TestArgumentsHugeAndDeep: huge or deeply nested arguments get the same
// bounded answer, and the handler never runs.
func TestArgumentsHugeAndDeep(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	ran := false
	if err := s.AddTool(Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer"}},"d":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(c *Call) error { ran = true; c.Text("x"); return nil }}); err != nil {
		t.Fatal(err)
	}
	huge := `{"l":[` + strings.Repeat(`"x",`, 100000) + `1]}`
	// Deeper than MaxDepth is refused by the transports' Peek (-32600)
	// before the engine sees it; this is as deep as gets through.
	deep := `{"d":` + strings.Repeat("[", 120) + strings.Repeat("]", 120) + `}`
	wide := `{`
	for i := range 5000 {
		wide += `"k` + strconv.Itoa(i) + `":1,`
	}
	wide += `"d":1}`
	for name, args := range map[string]string{"huge": huge, "deep": deep, "wide": wide} {
		r := decodeReply(t, runToolCall(t, s, "t", args))
		if r.Result == nil || !r.Result.IsError {
			t.Fatalf("%s: got %+v", name, r.Error)
		}
		text := r.Result.Content[0].Text
		if len(text) > (maxArgPaths+1)*maxArgMessage || strings.Count(text, "\n") > maxArgPaths {
			t.Errorf("%s: %d bytes, %d lines", name, len(text), strings.Count(text, "\n")+1)
		}
	}
	if ran {
		t.Error("the handler ran")
	}
	if got := s.Stats().InvalidArguments.Load(); got != 3 {
		t.Errorf("InvalidArguments = %d, want 3", got)
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
// type expected, never the decoder's diagnostic with a copy of the input.
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
		0: {`{"n":"` + secret + `"}`, "Invalid arguments: arguments.n: expected integer, got string"},
		1: {`{"inner":{"list":[1,"` + secret + `"]}}`, "Invalid arguments: arguments.inner.list: expected integer, got string"},
		2: {`{"n":1e400}`, "Invalid arguments: arguments.n: expected integer, got number"},
		3: {`{"text":["` + secret + `"]}`, "Invalid arguments: arguments.text: expected string, got array"},
	} {
		// In tools/call, Bind's error is the tool's error (SEP-1303).
		r := decodeReply(t, runToolCall(t, s, "bind", tc.args))
		if r.Error != nil || r.Result == nil || !r.Result.IsError || r.Result.Content[0].Text != tc.want {
			t.Errorf("%d: got %+v %+v, want %q", i, r.Error, r.Result, tc.want)
		}
	}
	if got := s.Stats().InvalidArguments.Load(); got != 4 {
		t.Errorf("InvalidArguments = %d, want 4", got)
	}
}

// TestIntegral: JSON Schema's integer on number literals, as the schema
// library (math/big) decides it, including the exponents it refuses.
func TestIntegral(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "-0.0": true, "1.0": true, "1e2": true, "12.50e1": true, "1.5": false, "1e-1": false,
		"100e-2": true, "0e1000010": true, "1e1000000": true, "1e1000010": false, "1.5e-1000010": false,
		"0e9223372036854775807": true, "0e9223372036854775808": false, "0e-9223372036854775808": true,
		"0e-9223372036854775809": false, "0e2000000000000000000": true, "0e000000000000000010000000000000000000": false,
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

// TestTextResultBytes: Text, TextBytes and ErrorText write, with their
// precomputed tails, the bytes of the codec's own encoders (AppendResponse
// around AppendTextResult), escapes included, and ArgBytes reads the
// arguments Peek recorded (plain) as it reads those it scans (an escape,
// a repeated name: the last wins, a value that is not a string).
func TestTextResultBytes(t *testing.T) {
	s := New(Config{Name: "srv", Version: "9"})
	for i, tc := range []struct {
		args, want string
		isError    bool
	}{
		0: {`{"text":"hello world"}`, "hello world", false},
		1: {`{"text":"a\"b\n\u00e9\u2028"}`, "a\"b\n\u00e9\u2028", false},
		2: {`{"text":"x","text":"last"}`, "last", false},
		3: {`{"text":"x","text":1}`, "", false},
		4: {`{"text":"oops"}`, "oops", true},
		5: {`{"mode":"bytes","text":"via TextBytes"}`, "via TextBytes", false},
	} {
		name := "text" + strconv.Itoa(i)
		if err := s.AddTool(Tool{Name: name, Handler: func(c *Call) error {
			b, _ := c.ArgBytes("text")
			str, _ := c.ArgString("text")
			if string(b) != str {
				t.Errorf("ArgBytes %q, ArgString %q", b, str)
			}
			switch {
			case tc.isError:
				c.ErrorText(str)
			case strings.Contains(tc.args, "mode"):
				c.TextBytes(b)
			default:
				c.Text(str)
			}
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		got := runToolCall(t, s, name, tc.args)
		want := codec.AppendResponse(nil, []byte("1"), codec.AppendTextResult(nil, []byte(tc.want), tc.isError, s.serverMeta))
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.args, got, want)
		}
	}
}

// TestLessSegmentTotal: the order describe and flatSchema sort path
// segments with is a strict total order on names that look like indexes
// or nearly (a repeated FuzzTypedFused input once listed "1", "02" and
// "0A" in a circle, so two equal inputs in different map orders got
// different answers), and it still puts items[2] before items[10].
func TestLessSegmentTotal(t *testing.T) {
	segs := []string{"", "0", "00", "01", "02", "0A", "1", "10", "2", "9", "-1", "+1", "1e1", " 1", "1 ",
		"99999999999999999999", "100000000000000000000", "a", "A", "m", "x0000 ", "é"}
	for _, a := range segs {
		if lessSegment(a, a) {
			t.Errorf("%q < itself", a)
		}
		for _, b := range segs {
			if a != b && lessSegment(a, b) == lessSegment(b, a) {
				t.Errorf("%q and %q: neither or both before the other", a, b)
			}
			for _, c := range segs {
				if lessSegment(a, b) && lessSegment(b, c) && !lessSegment(a, c) {
					t.Errorf("%q < %q < %q but not %q < %q", a, b, c, a, c)
				}
			}
		}
	}
	for _, p := range [][2]string{{"2", "10"}, {"9", "99999999999999999999"}, {"99999999999999999999", "100000000000000000000"}, {"10", "01"}, {"a", "b"}} {
		if !lessSegment(p[0], p[1]) {
			t.Errorf("%q not before %q", p[0], p[1])
		}
	}
}

// TestArgumentsManyFailuresSame: with more failures than describe keeps,
// the answer is still the same every time (the validator reports an
// object's unknown members in map order) and lists the first by path.
func TestArgumentsManyFailuresSame(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := s.AddTool(Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"d":{"type":"integer"}},"additionalProperties":false}`),
		Handler: func(c *Call) error { c.Text("x"); return nil }}); err != nil {
		t.Fatal(err)
	}
	wide := `{`
	for i := 299; i >= 0; i-- {
		wide += `"k` + strconv.Itoa(i) + `":1,`
	}
	wide += `"d":1}`
	var first string
	for i := range 20 {
		r := decodeReply(t, runToolCall(t, s, "t", wide))
		if r.Result == nil || !r.Result.IsError {
			t.Fatalf("got %+v", r.Error)
		}
		text := r.Result.Content[0].Text
		if i == 0 {
			first = text
			want := "Invalid arguments: arguments.k0: not allowed\narguments.k1: not allowed\narguments.k10: not allowed\n"
			if !strings.HasPrefix(text, want) || !strings.HasSuffix(text, "… and 292 more") {
				t.Fatalf("got %q", text)
			}
		} else if text != first {
			t.Fatalf("call %d: %q, first %q", i, text, first)
		}
	}
}
