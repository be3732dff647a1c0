package refserver

import (
	"errors"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/mrtr"
)

// Multi round-trip fixtures (SEP-2322, TRANSPORTS.md §7), written with
// package mrtr: its builders make the embedded requests, its typed
// decoding reads the answers. Every InputRequiredResult carries a
// requestState signed by r.state (state.go); a retry whose requestState
// does not verify is answered -32602 before anything else happens, and so
// is a malformed answer. A missing answer is asked for again (MRTR-11). A
// retry without requestState starts over (round 1).

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

// askElicit and askSampling are the fixtures' requests (legacy.go's too).
func askElicit(message, schema string) mcp.InputRequest { return mrtr.Elicit(message, schema) }

func askSampling(prompt string, maxTokens int) mcp.InputRequest {
	return mrtr.SampleText(prompt, maxTokens)
}

// errBadRound answers a verified state whose round the fixture has no
// step for.
var errBadRound = codec.NewError(codec.CodeInvalidParams, "Invalid params: requestState is for a round this tool does not have")

// the retry's inputs ------------------------------------------------------------

// elicit returns the elicitation response under key. A missing one is ok
// false (ask again, MRTR-11); a malformed one is the -32602 to return.
func (in mrtrIn) elicit(key string) (res mrtr.ElicitResult, ok bool, err error) {
	res, err = in.Elicit(key)
	if errors.Is(err, mrtr.ErrResponseMissing) {
		return res, false, nil
	}
	return res, err == nil, err
}

// acceptedString returns the non-empty string field of an accepted
// elicitation under key; ok is false when there is none yet (missing,
// declined, empty: the fixtures ask again or report).
func (in mrtrIn) acceptedString(key, field string) (s string, ok bool, err error) {
	res, found, err := in.elicit(key)
	if !found || !res.Accepted() {
		return "", false, err
	}
	s, _ = res.String(field)
	return s, s != "", nil
}

// samplingText returns the text of the CreateMessageResult under key.
func (in mrtrIn) samplingText(key string) (string, bool, error) {
	res, err := in.Sampling(key)
	switch {
	case errors.Is(err, mrtr.ErrResponseMissing):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	if t := res.Text(); t != "" {
		return t, true, nil
	}
	return "(no text content)", true, nil
}

// roots returns the roots of the ListRootsResult under key.
func (in mrtrIn) roots(key string) ([]mrtr.Root, bool, error) {
	roots, err := in.Roots(key)
	if errors.Is(err, mrtr.ErrResponseMissing) {
		return nil, false, nil
	}
	return roots, err == nil, err
}

// the handlers ------------------------------------------------------------------

func (r *refServer) irElicitation(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	res, answered, err := in.elicit("user_name")
	if err != nil {
		return err
	}
	if answered && !res.Accepted() {
		c.Text("No name was given (" + res.Action + ").")
		return nil
	}
	if name, _ := res.String("name"); name != "" {
		c.Text("Hello, " + name + "!")
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
	text, ok, err := in.samplingText("capital_question")
	if err != nil || ok {
		if ok {
			c.Text("Sampling response: " + text)
		}
		return err
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
	roots, ok, err := in.roots("client_roots")
	if err != nil {
		return err
	}
	if ok {
		uris := make([]string, len(roots))
		for i, rt := range roots {
			uris[i] = rt.URI
		}
		c.Text("Received " + strconv.Itoa(len(roots)) + " root(s): " + strings.Join(uris, ", "))
		return nil
	}
	return r.ask(c, map[string]mcp.InputRequest{"client_roots": mrtr.ListRoots()}, 1, "")
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
		return errBadRound
	}
	res, answered, err := in.elicit("confirm")
	switch {
	case err != nil:
		return err
	case !answered:
		return r.askConfirm(c)
	case res.Accepted():
		c.Text("state-ok: requestState verified and confirmation accepted")
	default:
		c.Text("requestState verified; confirmation " + res.Action)
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
		"client_roots": mrtr.ListRoots(),
	}
	if in.state == nil {
		return r.ask(c, all, 1, "")
	}
	if in.state.round != 1 {
		return errBadRound
	}
	name, hasName, err1 := in.acceptedString("user_name", "name")
	greeting, hasGreeting, err2 := in.samplingText("greeting")
	roots, hasRoots, err3 := in.roots("client_roots")
	for _, err := range [...]error{err1, err2, err3} {
		if err != nil {
			return err // a malformed answer: -32602
		}
	}
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
	step2 := map[string]mcp.InputRequest{"step2": askElicit("Step 2: What is your favorite color?", schemaColor)}
	if in.state == nil {
		return r.ask(c, step1, 1, "")
	}
	switch in.state.round {
	case 1:
		name, ok, err := in.acceptedString("step1", "name")
		if err != nil || !ok {
			if err != nil {
				return err
			}
			return r.ask(c, step1, 1, "")
		}
		return r.ask(c, step2, 2, name)
	case 2:
		name := in.state.data
		color, ok, err := in.acceptedString("step2", "color")
		if err != nil || !ok {
			if err != nil {
				return err
			}
			return r.ask(c, step2, 2, name)
		}
		c.Text("Multi-round complete: " + name + "'s favorite color is " + color)
		return nil
	}
	return errBadRound
}

// irCapabilities asks only for what this request's clientCapabilities allow
// (MRTR-04).
func (r *refServer) irCapabilities(c *engine.Call) error {
	in, err := r.mrtrInput(c)
	if err != nil {
		return err
	}
	keys := [...]string{"user_name", "greeting", "client_roots"}
	var got []string
	for _, k := range keys {
		if in.Has(k) {
			got = append(got, k)
		}
	}
	if len(got) > 0 {
		c.Text("Capability-aware inputs received: " + strings.Join(got, ", "))
		return nil
	}
	reqs := map[string]mcp.InputRequest{}
	for i, req := range [...]mcp.InputRequest{
		askElicit("What is your name?", schemaName),
		askSampling("Generate a short greeting", 50),
		mrtr.ListRoots(),
	} {
		if mrtr.Allowed(c, req) {
			reqs[keys[i]] = req
		}
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
	res, answered, err := in.elicit("user_context")
	if err != nil {
		return err
	}
	if ctx, _ := res.String("context"); ctx != "" && res.Accepted() {
		return c.Return(mcp.PromptResult{
			Description: "A prompt built from elicited context",
			Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("Context: " + ctx)},
			},
		})
	}
	if answered && !res.Accepted() {
		return c.Return(mcp.PromptResult{
			Description: "A prompt without elicited context",
			Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent("No context was given (" + res.Action + ").")},
			},
		})
	}
	return r.ask(c, map[string]mcp.InputRequest{
		"user_context": askElicit("What context should the prompt use?", schemaContext),
	}, 1, "")
}
