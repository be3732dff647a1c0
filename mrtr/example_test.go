package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// An MRTR round trip. The tool asks for a confirmation and keeps what it
// has decided so far ("release-42") in the requestState; the client
// answers in OnInput and retries; the retry's state is verified (bound to
// this principal, tool and arguments) before the answer is read. In
// production the keys come from mrtr.LoadKeys, shared by every replica.
func Example() {
	signer, err := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{bytes.Repeat([]byte{7}, 32)}})
	if err != nil {
		panic(err)
	}
	srv := engine.New(engine.Config{Name: "deployer", Version: "1.0.0"})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	err = srv.AddTool(engine.Tool{
		Name:                       "deploy",
		InputSchema:                json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
		RequiredClientCapabilities: []string{"elicitation"},
		Handler: func(c *engine.Call) error {
			// A state that fails verification ends the request: -32602.
			release, resumed, err := signer.Verify(c)
			if err != nil {
				return err
			}
			in, err := mrtr.Responses(c)
			if err != nil {
				return err
			}
			env, _ := c.ArgString("env")
			answer, err := in.Elicit("confirm")
			if !resumed || errors.Is(err, mrtr.ErrResponseMissing) {
				// The first round, or a retry without the answer: ask
				// (again, MRTR-11), carrying the decision in the state.
				return signer.Ask(c, map[string]mcp.InputRequest{
					"confirm": mrtr.Elicit("Deploy to "+env+"?",
						`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
				}, []byte("release-42"))
			}
			if err != nil {
				return err // a malformed answer: -32602
			}
			var form struct {
				OK bool `json:"ok"`
			}
			if err := answer.Decode(&form); err != nil {
				return err
			}
			if !answer.Accepted() || !form.OK {
				c.Text("not deployed (" + answer.Action + ")")
				return nil
			}
			c.Text("deployed " + string(release) + " to " + env)
			return nil
		},
	})
	if err != nil {
		panic(err)
	}

	// The client, connected through a pipe (any transport will do).
	dial := func(context.Context) (io.ReadWriteCloser, error) {
		ours, theirs := net.Pipe()
		go func() {
			_ = stdio.ServeConn(context.Background(), srv, theirs, theirs, stdio.Config{})
			theirs.Close()
		}()
		return ours, nil
	}
	quiet := slog.New(slog.DiscardHandler)
	c := client.New(client.NewLineTransport(dial, client.LineConfig{Logger: quiet}), client.Config{
		Logger: quiet,
		OnInput: func(_ context.Context, key string, req mcp.InputRequest) (json.RawMessage, error) {
			var p mrtr.ElicitParams
			if err := req.DecodeParams(&p); err != nil {
				return nil, err
			}
			fmt.Printf("asked %q (%s, %s mode): %s\n", key, req.Method, p.Mode, p.Message)
			return json.RawMessage(`{"action":"accept","content":{"ok":true}}`), nil
		},
	})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	res, err := c.CallTool(ctx, "deploy", map[string]string{"env": "prod"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	fmt.Println("states signed:", signer.Stats().Signed.Load(), "verified:", signer.Stats().Verified.Load())
	// Output:
	// asked "confirm" (elicitation/create, form mode): Deploy to prod?
	// deployed release-42 to prod
	// states signed: 1 verified: 1
}

// A state opens only for the request it was issued to. Each refusal is a
// -32602 error naming the failed check, and is counted.
func ExampleSigner_Open() {
	s, err := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{bytes.Repeat([]byte{7}, 32)}})
	if err != nil {
		panic(err)
	}
	issued := mrtr.Binding{Principal: "alice", Method: "tools/call", Target: "deploy", Arguments: []byte(`{"env":"prod","replicas":3}`)}
	state, _ := s.Seal(issued, []byte("release-42"))

	retry := issued
	retry.Arguments = []byte(`{ "replicas": 3.0, "env": "prod" }`) // the same value
	data, err := s.Open(retry, state)
	fmt.Printf("%s %v\n", data, err)

	for _, b := range []mrtr.Binding{
		{Principal: "mallory", Method: "tools/call", Target: "deploy", Arguments: issued.Arguments},
		{Principal: "alice", Method: "tools/call", Target: "destroy", Arguments: issued.Arguments},
		{Principal: "alice", Method: "tools/call", Target: "deploy", Arguments: []byte(`{"env":"prod","replicas":300}`)},
	} {
		_, err := s.Open(b, state)
		var rpc *codec.Error
		errors.As(err, &rpc)
		fmt.Println(int(rpc.Code), rpc.Message)
	}
	_, err = s.Open(issued, state+"x")
	fmt.Println(err)
	fmt.Println("wrong arguments:", s.Stats().WrongArguments.Load(), "malformed:", s.Stats().Malformed.Load())
	// Output:
	// release-42 <nil>
	// -32602 Invalid params: requestState was issued to another principal
	// -32602 Invalid params: requestState was issued for another tool
	// -32602 Invalid params: requestState was issued for other arguments
	// Invalid params: requestState is malformed
	// wrong arguments: 1 malformed: 1
}

// The requests a server may embed, built for the wire (MRTR-03).
func ExampleSample() {
	cost := 0.0
	req := mrtr.Sample(mrtr.SamplingRequest{
		Messages:         []mrtr.SamplingMessage{mrtr.UserText("Name a prime number.")},
		MaxTokens:        20,
		SystemPrompt:     "Answer with a number.",
		ModelPreferences: &mrtr.ModelPreferences{Hints: []mrtr.ModelHint{{Name: "haiku"}}, CostPriority: &cost},
	})
	for _, r := range []mcp.InputRequest{req, mrtr.ElicitURL("Link your account", "https://example.com/link"), mrtr.ListRoots()} {
		b, _ := codec.Marshal(r)
		fmt.Println(string(b))
	}
	// Output:
	// {"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Name a prime number."}}],"maxTokens":20,"systemPrompt":"Answer with a number.","modelPreferences":{"hints":[{"name":"haiku"}],"costPriority":0}}}
	// {"method":"elicitation/create","params":{"mode":"url","message":"Link your account","url":"https://example.com/link"}}
	// {"method":"roots/list","params":{}}
}

// Reading a retry's answers by key: typed, and -32602 when malformed.
func ExampleInputResponses() {
	in, _ := mrtr.ParseResponses([]byte(`{
		"name":  {"action":"accept","content":{"name":"Ada"}},
		"llm":   {"role":"assistant","content":{"type":"text","text":"7"},"model":"haiku"},
		"roots": {"roots":[{"uri":"file:///src","name":"src"}]},
		"bad":   {"action":"maybe"}
	}`))
	name, _ := in.Elicit("name")
	who, _ := name.String("name")
	llm, _ := in.Sampling("llm")
	roots, _ := in.Roots("roots")
	fmt.Println(name.Action, who, llm.Text(), llm.Model, roots[0].URI)
	_, err := in.Elicit("bad")
	fmt.Println(err)
	_, err = in.Elicit("email")
	fmt.Println(errors.Is(err, mrtr.ErrResponseMissing), err)
	// Output:
	// accept Ada 7 haiku file:///src
	// Invalid params: inputResponses.bad action must be accept, decline or cancel
	// true Invalid params: inputResponses.email is missing
}

// The key list of `mcpwire serve --state-key-file`: the first key signs,
// all verify (here: mid-rotation, new key first).
func ExampleParseKeys() {
	keys, err := mrtr.ParseKeys(`
# new key, then the old one until its states expire
5f2c9a0e4b7d18e3a6c1f0b2d9e8a7c65f2c9a0e4b7d18e3a6c1f0b2d9e8a7c6
base64:q6urq6urq6urq6urq6urqw==
`)
	fmt.Println(len(keys), len(keys[0]), len(keys[1]), err)
	// Output:
	// 2 32 16 <nil>
}
