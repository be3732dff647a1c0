package refserver

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// Multi round-trip fixtures (SEP-2322, TRANSPORTS.md §7). Every
// InputRequiredResult carries a requestState minted by r.state; a retry
// whose requestState does not verify is answered -32602 before anything
// else happens. A retry without requestState starts over (round 1).

// Elicitation schemas of the fixtures.
const (
	schemaName    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	schemaColor   = `{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`
	schemaConfirm = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	schemaContext = `{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`
)

func (r *refServer) mrtrTools() []engine.Tool {
	return []engine.Tool{
		{
			Name:                       "test_input_required_result_elicitation",
			Description:                "MRTR: asks for the caller's name with an in-band elicitation, then greets them",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"elicitation"},
			Handler:                    r.irElicitation,
		},
		{
			Name:                       "test_input_required_result_sampling",
			Description:                "MRTR: asks for an LLM completion with an in-band sampling request, then returns its text",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"sampling"},
			Handler:                    r.irSampling,
		},
		{
			Name:                       "test_input_required_result_list_roots",
			Description:                "MRTR: asks for the client's roots with an in-band roots/list request, then lists them",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"roots"},
			Handler:                    r.irListRoots,
		},
		{
			Name:                       "test_input_required_result_request_state",
			Description:                "MRTR: asks for a confirmation with an integrity-protected requestState and answers state-ok once both come back",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"elicitation"},
			Handler:                    r.irRequestState,
		},
		{
			Name:                       "test_input_required_result_multiple_inputs",
			Description:                "MRTR: asks for an elicitation, a sampling and a roots/list input in one round",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"elicitation", "sampling", "roots"},
			Handler:                    r.irMultipleInputs,
		},
		{
			Name:                       "test_input_required_result_multi_round",
			Description:                "MRTR: two elicitation rounds carried by an evolving requestState, then a result",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"elicitation"},
			Handler:                    r.irMultiRound,
		},
		{
			Name:                       "test_input_required_result_tampered_state",
			Description:                "MRTR: rejects a retry whose requestState fails integrity verification with -32602",
			InputSchema:                schemaNoArgs,
			RequiredClientCapabilities: []string{"elicitation"},
			Handler:                    r.irTamperedState,
		},
		{
			Name:        "test_input_required_result_capabilities",
			Description: "MRTR: asks only for the inputs this request's clientCapabilities allow (elicitation, sampling, roots)",
			InputSchema: schemaNoArgs,
			Handler:     r.irCapabilities,
		},
	}
}

// the embedded requests -------------------------------------------------------

type elicitParams struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

type samplingMessage struct {
	Role    string      `json:"role"`
	Content mcp.Content `json:"content"`
}

type samplingParams struct {
	Messages  []samplingMessage `json:"messages"`
	MaxTokens int               `json:"maxTokens"`
}

func askElicit(message, schema string) mcp.InputRequest {
	return mcp.InputRequest{Method: "elicitation/create", Params: elicitParams{
		Mode: "form", Message: message, RequestedSchema: json.RawMessage(schema),
	}}
}

func askSampling(prompt string, maxTokens int) mcp.InputRequest {
	return mcp.InputRequest{Method: "sampling/createMessage", Params: samplingParams{
		Messages:  []samplingMessage{{Role: "user", Content: mcp.TextContent(prompt)}},
		MaxTokens: maxTokens,
	}}
}

func askRoots() mcp.InputRequest {
	return mcp.InputRequest{Method: "roots/list", Params: json.RawMessage(`{}`)}
}

// the retry's inputs ------------------------------------------------------------

// mrtrIn is what a (possibly retried) MRTR request carries.
type mrtrIn struct {
	responses map[string]json.RawMessage
	state     *stateData // nil: no requestState
}

var errBadInputResponses = codec.NewError(codec.CodeInvalidParams, "Invalid params: inputResponses must be an object")

// mrtrInput reads params.inputResponses and verifies params.requestState
// (SEC-07): a state that does not verify fails the request with -32602.
func (r *refServer) mrtrInput(c *engine.Call) (mrtrIn, error) {
	var in mrtrIn
	if raw, ok := c.ParamRaw("inputResponses"); ok {
		if len(raw) == 0 || raw[0] != '{' {
			return in, errBadInputResponses
		}
		if err := codec.Unmarshal(raw, &in.responses); err != nil {
			return in, errBadInputResponses
		}
	}
	if _, ok := c.ParamRaw("requestState"); ok {
		s, ok := codec.LookupString(c.Params(), "requestState")
		if !ok {
			return in, errBadState
		}
		st, err := r.state.verify(c, s.String())
		if err != nil {
			r.log.Debug("requestState rejected", "method", c.Method(), "name", c.Name(), "reason", err)
			return in, errBadState
		}
		in.state = &st
	}
	return in, nil
}

// elicit returns the elicitation response under key: its action (accept,
// decline or cancel) and, for accept, its content. ok is false when the key
// is absent or does not hold an ElicitResult.
func (in mrtrIn) elicit(key string) (action string, content map[string]any, ok bool) {
	raw, found := in.responses[key]
	if !found {
		return "", nil, false
	}
	var res struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if codec.Unmarshal(raw, &res) != nil {
		return "", nil, false
	}
	switch res.Action {
	case "accept":
		return res.Action, res.Content, true
	case "decline", "cancel":
		return res.Action, nil, true
	}
	return "", nil, false
}

// acceptedString returns the non-empty string field of an accepted
// elicitation; ok is false otherwise.
func (in mrtrIn) acceptedString(key, field string) (string, bool) {
	action, content, ok := in.elicit(key)
	if !ok || action != "accept" {
		return "", false
	}
	s, _ := content[field].(string)
	return s, s != ""
}

// samplingText returns the text of the CreateMessageResult under key.
func (in mrtrIn) samplingText(key string) (string, bool) {
	raw, found := in.responses[key]
	if !found {
		return "", false
	}
	var res struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if codec.Unmarshal(raw, &res) != nil || res.Role == "" || len(res.Content) == 0 {
		return "", false
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var blocks []block
	if res.Content[0] == '[' {
		if codec.Unmarshal(res.Content, &blocks) != nil {
			return "", false
		}
	} else {
		var b block
		if codec.Unmarshal(res.Content, &b) != nil {
			return "", false
		}
		blocks = []block{b}
	}
	for _, b := range blocks {
		if b.Type == "text" {
			return b.Text, true
		}
	}
	return "(no text content)", true
}

type root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// roots returns the roots of the ListRootsResult under key.
func (in mrtrIn) roots(key string) ([]root, bool) {
	raw, found := in.responses[key]
	if !found {
		return nil, false
	}
	var res struct {
		Roots *[]root `json:"roots"`
	}
	if codec.Unmarshal(raw, &res) != nil || res.Roots == nil {
		return nil, false
	}
	return *res.Roots, true
}

// ask answers with an InputRequiredResult carrying reqs and a fresh
// requestState for round (data travels in the state, integrity-protected).
func (r *refServer) ask(c *engine.Call, reqs map[string]mcp.InputRequest, round uint64, data string) error {
	st, err := r.state.mint(c, round, data)
	if err != nil {
		return codec.NewError(codec.CodeInvalidParams, "Invalid params: arguments are not valid JSON")
	}
	return c.InputRequired(mcp.InputRequired{InputRequests: reqs, RequestState: st})
}

// the handlers ------------------------------------------------------------------

func (r *refServer) irElicitation(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	if name, ok := in.acceptedString("user_name", "name"); ok {
		c.Text("Hello, " + name + "!")
		return nil
	}
	if action, _, ok := in.elicit("user_name"); ok && action != "accept" {
		c.Text("No name was given (" + action + ").")
		return nil
	}
	return r.ask(c, map[string]mcp.InputRequest{
		"user_name": askElicit("What is your name?", schemaName),
	}, 1, "")
}

func (r *refServer) irSampling(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	if text, ok := in.samplingText("capital_question"); ok {
		c.Text("Sampling response: " + text)
		return nil
	}
	return r.ask(c, map[string]mcp.InputRequest{
		"capital_question": askSampling("What is the capital of France?", 100),
	}, 1, "")
}

func (r *refServer) irListRoots(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	if roots, ok := in.roots("client_roots"); ok {
		uris := make([]string, len(roots))
		for i, rt := range roots {
			uris[i] = rt.URI
		}
		c.Text("Received " + strconv.Itoa(len(roots)) + " root(s): " + strings.Join(uris, ", "))
		return nil
	}
	return r.ask(c, map[string]mcp.InputRequest{"client_roots": askRoots()}, 1, "")
}

func (r *refServer) askConfirm(c *engine.Call) error {
	return r.ask(c, map[string]mcp.InputRequest{
		"confirm": askElicit("Please confirm", schemaConfirm),
	}, 1, "")
}

// confirmed finishes the request_state and tampered_state fixtures once a
// verified round-1 state came back: state-ok when the confirmation was
// accepted, asking again when it is missing.
func (r *refServer) confirmed(c *engine.Call, in mrtrIn) error {
	if in.state.round != 1 {
		return errBadState
	}
	action, _, ok := in.elicit("confirm")
	switch {
	case !ok:
		return r.askConfirm(c)
	case action == "accept":
		c.Text("state-ok: requestState verified and confirmation accepted")
	default:
		c.Text("requestState verified; confirmation " + action)
	}
	return nil
}

func (r *refServer) irRequestState(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	if in.state == nil {
		return r.askConfirm(c)
	}
	return r.confirmed(c, in)
}

func (r *refServer) irTamperedState(c *engine.Call) error {
	// Same flow as request_state; the point is mrtrInput's verification,
	// which answers a modified requestState with -32602.
	return r.irRequestState(c)
}

func (r *refServer) irMultipleInputs(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	all := map[string]mcp.InputRequest{
		"user_name":    askElicit("What is your name?", schemaName),
		"greeting":     askSampling("Generate a greeting", 50),
		"client_roots": askRoots(),
	}
	if in.state == nil {
		return r.ask(c, all, 1, "")
	}
	if in.state.round != 1 {
		return errBadState
	}
	name, hasName := in.acceptedString("user_name", "name")
	greeting, hasGreeting := in.samplingText("greeting")
	roots, hasRoots := in.roots("client_roots")
	if hasName && hasGreeting && hasRoots {
		c.Text("All inputs received: name=" + name + ", greeting=" + strconv.Quote(greeting) +
			", roots=" + strconv.Itoa(len(roots)))
		return nil
	}
	// Ask again for what is still missing only (MRTR-11).
	if hasName {
		delete(all, "user_name")
	}
	if hasGreeting {
		delete(all, "greeting")
	}
	if hasRoots {
		delete(all, "client_roots")
	}
	return r.ask(c, all, 1, "")
}

// irMultiRound: round 1 asks for a name, round 2 (whose state carries the
// name) for a colour, then the result.
func (r *refServer) irMultiRound(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	step1 := map[string]mcp.InputRequest{"step1": askElicit("Step 1: What is your name?", schemaName)}
	if in.state == nil {
		return r.ask(c, step1, 1, "")
	}
	switch in.state.round {
	case 1:
		name, ok := in.acceptedString("step1", "name")
		if !ok {
			return r.ask(c, step1, 1, "")
		}
		return r.ask(c, map[string]mcp.InputRequest{
			"step2": askElicit("Step 2: What is your favorite color?", schemaColor),
		}, 2, name)
	case 2:
		name := in.state.data
		color, ok := in.acceptedString("step2", "color")
		if !ok {
			return r.ask(c, map[string]mcp.InputRequest{
				"step2": askElicit("Step 2: What is your favorite color?", schemaColor),
			}, 2, name)
		}
		c.Text("Multi-round complete: " + name + "'s favorite color is " + color)
		return nil
	}
	return errBadState
}

// irCapabilities asks only for what this request's clientCapabilities allow
// (MRTR-04).
func (r *refServer) irCapabilities(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	var got []string
	for _, k := range [...]string{"user_name", "greeting", "client_roots"} {
		if _, ok := in.responses[k]; ok {
			got = append(got, k)
		}
	}
	if len(got) > 0 {
		c.Text("Capability-aware inputs received: " + strings.Join(got, ", "))
		return nil
	}
	reqs := map[string]mcp.InputRequest{}
	if c.HasClientCapability("elicitation") {
		reqs["user_name"] = askElicit("What is your name?", schemaName)
	}
	if c.HasClientCapability("sampling") {
		reqs["greeting"] = askSampling("Generate a short greeting", 50)
	}
	if c.HasClientCapability("roots") {
		reqs["client_roots"] = askRoots()
	}
	if len(reqs) == 0 {
		c.Text("No declared client capability allows an input request.")
		return nil
	}
	return r.ask(c, reqs, 1, "")
}

// irPrompt is test_input_required_result_prompt: MRTR on prompts/get.
func (r *refServer) irPrompt(c *engine.Call) error {
	if !c.HasClientCapability("elicitation") {
		return engine.ErrMissingCapabilities("elicitation")
	}
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	if ctx, ok := in.acceptedString("user_context", "context"); ok {
		return c.Return(mcp.PromptResult{
			Description: "A prompt built from elicited context",
			Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("Context: " + ctx)},
			},
		})
	}
	if action, _, ok := in.elicit("user_context"); ok && action != "accept" {
		return c.Return(mcp.PromptResult{
			Description: "A prompt without elicited context",
			Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("No context was given (" + action + ").")},
			},
		})
	}
	return r.ask(c, map[string]mcp.InputRequest{
		"user_context": askElicit("What context should the prompt use?", schemaContext),
	}, 1, "")
}
