package engine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// printReply is a Replier that prints a tool result's text (after
// "isError:" for a tool error) or the JSON-RPC error message.
type printReply struct{ done chan struct{} }

func (printReply) Notify(*engine.Request, []byte) error { return nil }
func (p printReply) Done(*engine.Request)               { close(p.done) }
func (printReply) Reply(_ *engine.Request, frame []byte, _ int) error {
	var r struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool `json:"isError"`
		}
		Error struct{ Message string }
	}
	_ = json.Unmarshal(frame, &r)
	if len(r.Result.Content) > 0 {
		if r.Result.IsError {
			fmt.Print("isError: ")
		}
		fmt.Println(r.Result.Content[0].Text)
	} else {
		fmt.Println("error:", r.Error.Message)
	}
	return nil
}

// call runs tools/call name with the raw arguments, as a transport would.
func call(s *engine.Server, name, args string) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		fmt.Println(err)
		return
	}
	rep := printReply{done: make(chan struct{})}
	r := engine.NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		fmt.Println(e.Message)
		return
	}
	r.Run()
	<-rep.done
}

// Bind matches member names exactly, as the json tags spell them:
// encoding/json would fill Text from {"Text":…} (it folds case), Bind
// leaves it empty. A value of the wrong type is an *ArgumentsError naming
// the argument, which a tool's handler returns as is: the model gets a
// tool error it can read (SEP-1303). (SkipValidation shows Bind on its
// own; with the schema checked, the last call would be refused before the
// handler runs.)
func ExampleCall_Bind() {
	type greetArgs struct {
		Text string `json:"text"`
	}
	var std greetArgs
	_ = json.Unmarshal([]byte(`{"Text":"hi"}`), &std)
	fmt.Printf("encoding/json: %q\n", std.Text)

	s := engine.New(engine.Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(engine.Tool{Name: "greet", SkipValidation: true, Handler: func(c *engine.Call) error {
		var a greetArgs
		if err := c.Bind(&a); err != nil {
			return err
		}
		c.Text(fmt.Sprintf("Bind: %q", a.Text))
		return nil
	}})
	call(s, "greet", `{"text":"hi"}`)
	call(s, "greet", `{"Text":"hi"}`)
	call(s, "greet", `{"text":["hi"]}`)
	// Output:
	// encoding/json: "hi"
	// Bind: "hi"
	// Bind: ""
	// isError: Invalid arguments: arguments.text: expected string, got array
}

// A tool's InputSchema is compiled by AddTool and checked before the
// handler runs: missing or mistyped arguments are answered with a tool
// error (isError true) naming each one on a line of its own, so the model
// can correct its call (SEP-1303), and the handler never sees them.
func ExampleTool_inputSchema() {
	s := engine.New(engine.Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	err := s.AddTool(engine.Tool{
		Name:        "add",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`),
		Handler: func(c *engine.Call) error {
			var in struct {
				A int `json:"a"`
				B int `json:"b"`
			}
			if err := c.Bind(&in); err != nil {
				return err
			}
			c.Text(fmt.Sprint(in.A + in.B))
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	call(s, "add", `{"a":1,"b":2}`)
	call(s, "add", `{"a":1}`)
	call(s, "add", `{"a":1,"b":"2"}`)
	call(s, "add", `{"a":1,"b":2.5}`)
	call(s, "add", `{"b":"2"}`)
	// Output:
	// 3
	// isError: Invalid arguments: arguments.b: required
	// isError: Invalid arguments: arguments.b: expected integer, got string
	// isError: Invalid arguments: arguments.b: expected integer, got number
	// isError: Invalid arguments: arguments.a: required
	// arguments.b: expected integer, got string
}
