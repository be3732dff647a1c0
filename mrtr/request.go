package mrtr

import (
	"encoding/json"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// The methods of the requests an InputRequiredResult may embed (MRTR-03).
const (
	MethodElicit    = "elicitation/create"
	MethodSample    = "sampling/createMessage"
	MethodListRoots = "roots/list"
)

// Elicitation modes.
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// ElicitParams is the params of an elicitation/create request: form mode
// (ElicitRequestFormParams: Message and RequestedSchema) or URL mode
// (ElicitRequestURLParams: Message and URL).
type ElicitParams struct {
	Mode    string `json:"mode,omitempty"` // ModeForm or ModeURL
	Message string `json:"message"`
	// RequestedSchema (form mode) is the form: a JSON Schema object whose
	// properties are primitives (string, number, integer, boolean, enums
	// and arrays of enum strings), no nesting. Any value that encodes to
	// it: json.RawMessage, a map, a struct.
	RequestedSchema any `json:"requestedSchema,omitempty"`
	// URL (URL mode) is where the user goes; what happens there stays out
	// of band, and the client answers accept without content.
	URL string `json:"url,omitempty"`
}

// Elicit returns a form-mode elicitation/create request: ask the user
// message, with a form described by schema (a JSON Schema object of
// primitive properties; a string or json.RawMessage holding its JSON, or
// any value that encodes to it). The answer is an ElicitResult
// (InputResponses.Elicit). The request's clientCapabilities must declare
// elicitation (MRTR-04).
func Elicit(message string, schema any) mcp.InputRequest {
	if s, ok := schema.(string); ok {
		schema = json.RawMessage(s)
	}
	return mcp.InputRequest{Method: MethodElicit, Params: ElicitParams{Mode: ModeForm, Message: message, RequestedSchema: schema}}
}

// ElicitURL returns a URL-mode elicitation/create request: ask the user to
// visit url (for what must not pass through the client: credentials,
// payments, consent at a third party). The answer is an ElicitResult
// without content. The request's clientCapabilities must declare
// elicitation.url (MRTR-04, see Allowed).
func ElicitURL(message, url string) mcp.InputRequest {
	return mcp.InputRequest{Method: MethodElicit, Params: ElicitParams{Mode: ModeURL, Message: message, URL: url}}
}

// SamplingRequest is the params of a sampling/createMessage request
// (CreateMessageRequestParams): ask the client's model for a message.
type SamplingRequest struct {
	Messages []SamplingMessage `json:"messages"`
	// MaxTokens is the most tokens to sample; the client may sample fewer.
	MaxTokens int `json:"maxTokens"`
	// SystemPrompt may be modified or dropped by the client.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// ModelPreferences are advisory.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	// IncludeContext: "none" or omitted. "thisServer" and "allServers"
	// are deprecated, for clients that declare sampling.context.
	IncludeContext string `json:"includeContext,omitempty"`
	// Metadata is passed to the model provider as it is (a JSON object).
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Tools and ToolChoice let the model call tools; only for clients
	// that declare sampling.tools (the client must refuse them otherwise).
	Tools      []mcp.Tool  `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
}

// SamplingMessage is one message of the conversation to sample from:
// Role "user" or "assistant", one content block (text, image or audio).
type SamplingMessage struct {
	Role    string      `json:"role"`
	Content mcp.Content `json:"content"`
}

// ModelPreferences says which model the server would like (all
// advisory). Hints are tried in order (a hint name matches as a
// substring of a model name); the priorities, from 0 to 1, weigh cost,
// speed and intelligence. A nil priority is not sent (0 means "does not
// matter", which is not the same).
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model, or part of a model's name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ToolChoice controls tool use while sampling: Mode "auto" (the
// default), "required" or "none".
type ToolChoice struct {
	Mode string `json:"mode,omitempty"`
}

// UserText returns a user message with one text block.
func UserText(text string) SamplingMessage {
	return SamplingMessage{Role: "user", Content: mcp.TextContent(text)}
}

// Sample returns a sampling/createMessage request with the params p. The
// answer is a SamplingResult (InputResponses.Sampling). The request's
// clientCapabilities must declare sampling (and sampling.tools when p
// has Tools or ToolChoice; MRTR-04, see Allowed).
func Sample(p SamplingRequest) mcp.InputRequest {
	return mcp.InputRequest{Method: MethodSample, Params: p}
}

// SampleText returns a sampling/createMessage request for one user text
// message, at most maxTokens long.
func SampleText(prompt string, maxTokens int) mcp.InputRequest {
	return Sample(SamplingRequest{Messages: []SamplingMessage{UserText(prompt)}, MaxTokens: maxTokens})
}

// ListRoots returns a roots/list request: the client's roots (the
// directories and files it lets the server work on). The answer is a
// list of Root (InputResponses.Roots). The request's clientCapabilities
// must declare roots (MRTR-04).
func ListRoots() mcp.InputRequest {
	return mcp.InputRequest{Method: MethodListRoots, Params: json.RawMessage(`{}`)}
}

const capsKey = "io.modelcontextprotocol/clientCapabilities"

// Allowed reports whether the request c's own clientCapabilities let a
// server embed req (MRTR-04; META-08: only this request's declaration
// counts): elicitation for a form (declared as elicitation.form, or as
// an elicitation object naming no mode, the older form-only spelling),
// elicitation.url for URL mode, sampling (with sampling.tools for tools
// or a tool choice, sampling.context for the deprecated includeContext
// values) and roots. An unknown method, or params that do not decode, is
// not allowed.
func Allowed(c *engine.Call, req mcp.InputRequest) bool {
	caps, ok := codec.LookupPath(c.Meta(), capsKey)
	if !ok {
		return false
	}
	has := func(path ...string) bool {
		raw, ok := codec.LookupPath(caps, path...)
		return ok && len(raw) > 0 && raw[0] == '{'
	}
	switch req.Method {
	case MethodElicit:
		if !has("elicitation") {
			return false
		}
		var p ElicitParams
		if v, ok := req.Params.(ElicitParams); ok {
			p = v
		} else if req.DecodeParams(&p) != nil {
			return false
		}
		if p.Mode == ModeURL {
			return has("elicitation", "url")
		}
		if p.Mode != "" && p.Mode != ModeForm {
			return false
		}
		_, form := codec.LookupPath(caps, "elicitation", "form")
		_, url := codec.LookupPath(caps, "elicitation", "url")
		return has("elicitation", "form") || !form && !url
	case MethodSample:
		if !has("sampling") {
			return false
		}
		var p SamplingRequest
		if v, ok := req.Params.(SamplingRequest); ok {
			p = v
		} else if req.DecodeParams(&p) != nil {
			return false
		}
		if (len(p.Tools) > 0 || p.ToolChoice != nil) && !has("sampling", "tools") {
			return false
		}
		if p.IncludeContext != "" && p.IncludeContext != "none" && !has("sampling", "context") {
			return false
		}
		return true
	case MethodListRoots:
		return has("roots")
	}
	return false
}
