package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// A typed tool: the input and output schemas come from the Go types, the
// arguments arrive decoded, and the result is structuredContent plus the
// same JSON as text. Arguments that do not fit the schema never reach the
// handler: the model gets a tool error naming each one (SEP-1303).
func ExampleAddTool() {
	type weatherIn struct {
		City  string `json:"city" jsonschema:"the city name"`
		Units string `json:"units,omitempty" enum:"metric,imperial"`
		Days  int    `json:"days,omitempty" minimum:"1" maximum:"7"`
	}
	type weatherOut struct {
		City        string  `json:"city"`
		Temperature float64 `json:"temperature"`
	}
	srv := engine.New(engine.Config{Name: "weather", Version: "1.0.0"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	err := engine.AddTool(srv, engine.Tool{Name: "forecast", Description: "Tomorrow's temperature"},
		func(c *engine.Call, in weatherIn) (weatherOut, error) {
			if in.City == "Atlantis" {
				return weatherOut{}, errors.New("no forecast under the sea") // an isError result
			}
			t := 21.5
			if in.Units == "imperial" {
				t = 70.7
			}
			return weatherOut{City: in.City, Temperature: t}, nil
		})
	if err != nil {
		panic(err)
	}

	var list struct {
		Result struct{ Tools []mcp.Tool }
	}
	_ = json.Unmarshal([]byte(serveLine(srv, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)), &list)
	fmt.Println("inputSchema: ", string(list.Result.Tools[0].InputSchema))
	fmt.Println("outputSchema:", string(list.Result.Tools[0].OutputSchema))

	for _, args := range []string{`{"city":"Paris"}`, `{"city":"Atlantis"}`, `{"units":"kelvin","days":0}`} {
		reply := serveLine(srv, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":`+args+`,`+meta+`}}`)
		var r struct {
			Result struct {
				Content           []mcp.Content
				StructuredContent json.RawMessage
				IsError           bool
			}
		}
		_ = json.Unmarshal([]byte(reply), &r)
		fmt.Printf("isError=%v structuredContent=%s\n%s\n", r.Result.IsError, r.Result.StructuredContent, r.Result.Content[0].Text)
	}
	// Output:
	// inputSchema:  {"type":"object","properties":{"city":{"type":"string","description":"the city name"},"units":{"type":"string","enum":["metric","imperial"]},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"],"additionalProperties":false}
	// outputSchema: {"type":"object","properties":{"city":{"type":"string"},"temperature":{"type":"number"}},"required":["city","temperature"],"additionalProperties":false}
	// isError=false structuredContent={"city":"Paris","temperature":21.5}
	// {"city":"Paris","temperature":21.5}
	// isError=true structuredContent=
	// no forecast under the sea
	// isError=true structuredContent=
	// Invalid arguments: arguments.city: required
	// arguments.days: must be at least 1
	// arguments.units: must be one of "metric", "imperial"
}

// A prompt with a required argument: prompts/get without it is refused
// with -32602 naming it, and the handler never renders a half-filled
// template.
func ExampleServer_AddPrompt() {
	srv := engine.New(engine.Config{Name: "prompts", Version: "1.0.0"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	err := srv.AddPrompt(engine.Prompt{
		Name:      "greet",
		Arguments: []mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
		Handler: func(c *engine.Call) error {
			name, _ := c.ArgString("name")
			return c.Return(mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("Please greet " + name + " warmly.")},
			}})
		},
	})
	if err != nil {
		panic(err)
	}
	get := func(args string) {
		reply := serveLine(srv, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":`+args+`,`+meta+`}}`)
		var r struct {
			Result *mcp.PromptResult
			Error  *codec.Error
		}
		_ = json.Unmarshal([]byte(reply), &r)
		if r.Error != nil {
			fmt.Printf("%d %s\n", r.Error.Code, r.Error.Message)
			return
		}
		fmt.Println(r.Result.Messages[0].Content.Text)
	}
	get(`{"name":"Ada"}`)
	get(`{}`)
	// Output:
	// Please greet Ada warmly.
	// -32602 Invalid arguments: arguments.name: required
}

// A typed prompt: its arguments come from the struct (a pointer field is
// optional), and arrive decoded.
func ExampleAddPrompt() {
	type reviewArgs struct {
		Language string  `json:"language" jsonschema:"the programming language"`
		Focus    *string `json:"focus" jsonschema:"what to look at first"`
	}
	srv := engine.New(engine.Config{Name: "prompts", Version: "1.0.0"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	err := engine.AddPrompt(srv, engine.Prompt{Name: "review", Description: "Review code"},
		func(c *engine.Call, in reviewArgs) (mcp.PromptResult, error) {
			text := "Review this " + in.Language + " code"
			if in.Focus != nil {
				text += ", looking at " + *in.Focus + " first"
			}
			return mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(text + ".")}}}, nil
		})
	if err != nil {
		panic(err)
	}
	var list struct {
		Result struct{ Prompts []mcp.Prompt }
	}
	_ = json.Unmarshal([]byte(serveLine(srv, `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{`+meta+`}}`)), &list)
	for _, a := range list.Result.Prompts[0].Arguments {
		fmt.Printf("%s (required %v): %s\n", a.Name, a.Required, a.Description)
	}
	for _, args := range []string{`{"language":"Go","focus":"error handling"}`, `{"focus":"tests"}`} {
		reply := serveLine(srv, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"review","arguments":`+args+`,`+meta+`}}`)
		var r struct {
			Result *mcp.PromptResult
			Error  *codec.Error
		}
		_ = json.Unmarshal([]byte(reply), &r)
		if r.Error != nil {
			fmt.Printf("%d %s\n", r.Error.Code, r.Error.Message)
			continue
		}
		fmt.Println(r.Result.Messages[0].Content.Text)
	}
	// Output:
	// language (required true): the programming language
	// focus (required false): what to look at first
	// Review this Go code, looking at error handling first.
	// -32602 Invalid arguments: arguments.language: required
}

// progressClient stands for the client of ExampleCall_Progress: it prints
// what reaches it, lets the tool go on after each progress notification,
// and after the second one cancels the request, as a client's
// notifications/cancelled (or a closed connection) would.
type progressClient struct {
	next   chan struct{}
	cancel context.CancelFunc
	seen   int
	done   chan struct{}
}

func (p *progressClient) Notify(_ *engine.Request, frame []byte) error {
	var n struct {
		Params struct {
			Progress, Total float64
			Message         string
		}
	}
	_ = json.Unmarshal(frame, &n)
	fmt.Printf("progress %v/%v %s\n", n.Params.Progress, n.Params.Total, n.Params.Message)
	if p.seen++; p.seen == 2 {
		p.cancel()
	} else {
		p.next <- struct{}{}
	}
	return nil
}

func (p *progressClient) Reply(_ *engine.Request, frame []byte, _ int) error {
	fmt.Println("reply:", string(frame)) // never: a cancelled request is not answered
	return nil
}

func (p *progressClient) Done(*engine.Request) { close(p.done) }

// Progress reports how far a long call has got, to a client that asked
// for it with a progressToken; the handler stops as soon as the call is
// cancelled, because the Call is its context.
func ExampleCall_Progress() {
	srv := engine.New(engine.Config{ProgressInterval: -1}) // every notification, for the example
	defer func() { _ = srv.Shutdown(context.Background()) }()
	next := make(chan struct{}, 1)
	_ = srv.AddTool(engine.Tool{Name: "index", Handler: func(c *engine.Call) error {
		const files = 5
		for i := 1; i <= files; i++ {
			c.Progress(float64(i), files, fmt.Sprintf("file %d of %d", i, files))
			select {
			case <-next: // the work of one step
			case <-c.Done():
				fmt.Println("handler stopped:", c.Err())
				return c.Err()
			}
		}
		c.Text("indexed")
		return nil
	}})

	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"index","arguments":{},` +
		strings.Replace(meta, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1) + `}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	client := &progressClient{next: next, cancel: cancel, done: make(chan struct{})}
	r := engine.NewScope(srv, "example").Begin(ctx, msg, &env, client, nil)
	if e := r.Check(); e != nil {
		panic(e.Message)
	}
	r.Start()
	<-client.done
	// Output:
	// progress 1/5 file 1 of 5
	// progress 2/5 file 2 of 5
	// handler stopped: context canceled
}
