package mcp

import (
	"encoding/json"
	"errors"

	"github.com/mcpwire/mcpwire/codec"
)

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Tool is one entry of a tools/list result: the tool as clients see it.
// (A server registers a tool with engine.Tool, which adds its handler and
// options; the engine builds this form from it.)
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments (a JSON object).
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema of structuredContent.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations is a JSON object of behaviour hints, passed as it is.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Resource is one entry of a resources/list result.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// ResourceTemplate is one entry of a resources/templates/list result.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt is one entry of a prompts/list result.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// Content is one item of a tool result or prompt message: text, image,
// audio, an embedded resource or a resource link. Set Type and the fields
// that type uses.
type Content struct {
	Type        string            `json:"type"` // "text", "image", "audio", "resource", "resource_link"
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"` // base64, for image and audio
	MimeType    string            `json:"mimeType,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"`
	URI         string            `json:"uri,omitempty"`  // resource_link
	Name        string            `json:"name,omitempty"` // resource_link
	Annotations json.RawMessage   `json:"annotations,omitempty"`
}

// TextContent returns a text content item.
func TextContent(s string) Content { return Content{Type: "text", Text: s} }

// ResourceContents is the body of a resource: Text or Blob (base64).
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// ToolResult is the result of tools/call (resultType "complete").
type ToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent is the result as a JSON value. A server sets any
	// value that encodes to it; in a result a client decoded, it holds the
	// json.RawMessage as received (DecodeStructured reads either).
	StructuredContent any  `json:"structuredContent,omitempty"`
	IsError           bool `json:"isError"`
}

// Text joins the text items of the result (no allocation for one).
func (r *ToolResult) Text() string {
	s := ""
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// ErrNoStructuredContent: the result carries no structuredContent.
var ErrNoStructuredContent = errors.New("mcp: the result has no structuredContent")

// DecodeStructured decodes StructuredContent into v (a pointer), with the
// exact-case key matching of package codec.
func (r *ToolResult) DecodeStructured(v any) error {
	if r.StructuredContent == nil {
		return ErrNoStructuredContent
	}
	return decodeValue(r.StructuredContent, v)
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// PromptMessage is one message of a prompts/get result.
type PromptMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// PromptResult is the result of prompts/get.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// Completion is the body of a completion/complete result.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// InputRequest is one request embedded in an InputRequiredResult (MRTR-03):
// elicitation/create, sampling/createMessage or roots/list, without jsonrpc
// or id.
type InputRequest struct {
	Method string `json:"method"`
	// Params: a server sets any value that encodes to the request's params;
	// in a request a client decoded, it holds the json.RawMessage as
	// received (DecodeParams reads either).
	Params any `json:"params,omitempty"`
}

// DecodeParams decodes Params into v (a pointer); absent params decode as
// an empty object.
func (r InputRequest) DecodeParams(v any) error {
	if r.Params == nil {
		return codec.Unmarshal([]byte(`{}`), v)
	}
	return decodeValue(r.Params, v)
}

// InputRequired is an InputRequiredResult (MRTR-01): at least one of
// InputRequests and RequestState is set. Only tools/call, prompts/get and
// resources/read may answer with it (MRTR-02).
type InputRequired struct {
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                  `json:"requestState,omitempty"`
}

// decodeValue decodes a JSON value held as raw bytes, or as any Go value
// that encodes to it, into v.
func decodeValue(val, v any) error {
	var raw []byte
	switch x := val.(type) {
	case json.RawMessage:
		raw = x
	default:
		b, err := codec.Marshal(x)
		if err != nil {
			return err
		}
		raw = b
	}
	return codec.Unmarshal(raw, v)
}
