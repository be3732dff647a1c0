package engine

import "encoding/json"

// Implementation names a client or server (serverInfo / clientInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
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
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError"`
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
	Params any    `json:"params,omitempty"`
}

// InputRequired is an InputRequiredResult (MRTR-01): at least one of
// InputRequests and RequestState is set. Only tools/call, prompts/get and
// resources/read may answer with it (MRTR-02).
type InputRequired struct {
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                  `json:"requestState,omitempty"`
}
