package mrtr

import (
	"encoding/json"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// InputResponses are the client's answers a retry carries in
// params.inputResponses (MRTR-05, MRTR-06): key → the result of the
// embedded request the server asked under that key. Keys the handler
// never asks about are ignored (MRTR-11). The zero value (no
// inputResponses) is empty. Every accessor copies what it returns, so
// results may be kept after the handler returns.
type InputResponses struct {
	m map[string]json.RawMessage
}

// Responses decodes params.inputResponses of c. Absent, it returns empty
// InputResponses (a first request). Present but not a JSON object, it is
// an *Error (-32602, ErrResponsesMalformed) to return as it is.
func Responses(c *engine.Call) (InputResponses, error) {
	raw, ok := c.ParamRaw("inputResponses")
	if !ok {
		return InputResponses{}, nil
	}
	return ParseResponses(raw)
}

// ParseResponses decodes an inputResponses object, as Responses does.
func ParseResponses(raw []byte) (InputResponses, error) {
	var r InputResponses
	if len(raw) == 0 || raw[0] != '{' || codec.Unmarshal(raw, &r.m) != nil {
		return InputResponses{}, errResponsesMalformed
	}
	return r, nil
}

// Len returns the number of responses, known keys or not.
func (r InputResponses) Len() int { return len(r.m) }

// Has reports whether there is a response under key.
func (r InputResponses) Has(key string) bool {
	_, ok := r.m[key]
	return ok
}

// Raw returns the response under key as received (a copy).
func (r InputResponses) Raw(key string) (json.RawMessage, bool) {
	v, ok := r.m[key]
	if !ok {
		return nil, false
	}
	return append(json.RawMessage(nil), v...), true
}

// get returns the response under key, which must be a JSON object.
func (r InputResponses) get(key, want string) (json.RawMessage, error) {
	v, ok := r.m[key]
	if !ok {
		return nil, responseError(ErrResponseMissing, key, "is missing")
	}
	if len(v) == 0 || v[0] != '{' {
		return nil, responseError(ErrResponseMalformed, key, "must be "+want)
	}
	return v, nil
}

// Decode decodes the response under key into v (a pointer), with the
// exact-case member matching of package codec. A missing response is
// ErrResponseMissing, one that does not fit v ErrResponseMalformed, both
// as an *Error (-32602).
func (r InputResponses) Decode(key string, v any) error {
	raw, ok := r.m[key]
	if !ok {
		return responseError(ErrResponseMissing, key, "is missing")
	}
	if codec.Unmarshal(raw, v) != nil {
		return responseError(ErrResponseMalformed, key, "does not have the expected form")
	}
	return nil
}

// The actions of an ElicitResult.
const (
	ActionAccept  = "accept"  // the user submitted the form (or finished at the URL)
	ActionDecline = "decline" // the user said no
	ActionCancel  = "cancel"  // the user dismissed the request without choosing
)

// ElicitResult is the answer to an elicitation/create request.
type ElicitResult struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string
	// Content is the submitted form, a JSON object, when Action is
	// accept and the request was a form; nil otherwise.
	Content json.RawMessage

	key string
}

// Accepted reports whether the user accepted.
func (e ElicitResult) Accepted() bool { return e.Action == ActionAccept }

// Decode decodes the submitted form into v (a pointer to a struct or a
// map); no content decodes as {}. A form that does not fit v is an
// *Error (-32602, ErrResponseMalformed).
func (e ElicitResult) Decode(v any) error {
	raw := []byte(e.Content)
	if raw == nil {
		raw = []byte(`{}`)
	}
	if codec.Unmarshal(raw, v) != nil {
		return responseError(ErrResponseMalformed, e.key, "content does not fit the requested form")
	}
	return nil
}

// String returns the string field name of the submitted form; ok is
// false when the form has no such field or it is not a string.
func (e ElicitResult) String(name string) (string, bool) {
	s, ok := codec.LookupString(e.Content, name)
	if !ok {
		return "", false
	}
	return s.String(), true
}

// Elicit returns the ElicitResult under key. A missing response is
// ErrResponseMissing; one that is not an object with a known action, or
// whose content is not an object, is ErrResponseMalformed (both an
// *Error, -32602). Content is kept for accept only.
func (r InputResponses) Elicit(key string) (ElicitResult, error) {
	raw, err := r.get(key, "an elicitation result (an object with action)")
	if err != nil {
		return ElicitResult{}, err
	}
	var res struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if codec.Unmarshal(raw, &res) != nil {
		return ElicitResult{}, responseError(ErrResponseMalformed, key, "must be an elicitation result (an object with action)")
	}
	out := ElicitResult{Action: res.Action, key: key}
	switch res.Action {
	case ActionAccept:
		switch {
		case len(res.Content) == 0 || string(res.Content) == "null":
		case res.Content[0] != '{':
			return ElicitResult{}, responseError(ErrResponseMalformed, key, "content must be an object")
		default:
			out.Content = append(json.RawMessage(nil), res.Content...)
		}
	case ActionDecline, ActionCancel:
	default:
		return ElicitResult{}, responseError(ErrResponseMalformed, key, "action must be accept, decline or cancel")
	}
	return out, nil
}

// SamplingResult is the answer to a sampling/createMessage request
// (CreateMessageResult).
type SamplingResult struct {
	Role       string // "assistant" (or "user")
	Model      string // the model that sampled, as the client names it
	StopReason string // "endTurn", "stopSequence", "maxTokens", "toolUse" or the provider's own
	// Content is the message's content blocks: one, or several when the
	// client sent an array (sampling with tools). Text, image and audio
	// blocks decode whole; tool_use and tool_result blocks keep their
	// Type and Name only (read Raw for the rest).
	Content []mcp.Content
	// Raw is the whole result as received.
	Raw json.RawMessage
}

// Text joins the text of the text blocks.
func (s SamplingResult) Text() string {
	t := ""
	for _, c := range s.Content {
		if c.Type == "text" {
			t += c.Text
		}
	}
	return t
}

// Sampling returns the SamplingResult under key. A missing response is
// ErrResponseMissing; one without a role of user or assistant, or without
// content blocks that each have a type, is ErrResponseMalformed (both an
// *Error, -32602). The model name, which the schema requires, is not
// insisted on.
func (r InputResponses) Sampling(key string) (SamplingResult, error) {
	raw, err := r.get(key, "a sampling result (an object with role and content)")
	if err != nil {
		return SamplingResult{}, err
	}
	var res struct {
		Role       string          `json:"role"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
		Content    json.RawMessage `json:"content"`
	}
	if codec.Unmarshal(raw, &res) != nil {
		return SamplingResult{}, responseError(ErrResponseMalformed, key, "must be a sampling result (an object with role and content)")
	}
	if res.Role != "user" && res.Role != "assistant" {
		return SamplingResult{}, responseError(ErrResponseMalformed, key, "role must be user or assistant")
	}
	out := SamplingResult{Role: res.Role, Model: res.Model, StopReason: res.StopReason, Raw: append(json.RawMessage(nil), raw...)}
	switch {
	case len(res.Content) > 0 && res.Content[0] == '{':
		var b mcp.Content
		if codec.Unmarshal(res.Content, &b) == nil {
			out.Content = []mcp.Content{b}
		}
	case len(res.Content) > 0 && res.Content[0] == '[':
		_ = codec.Unmarshal(res.Content, &out.Content)
	}
	if len(out.Content) == 0 {
		return SamplingResult{}, responseError(ErrResponseMalformed, key, "content must be a content block or a non-empty array of them")
	}
	for _, b := range out.Content {
		if b.Type == "" {
			return SamplingResult{}, responseError(ErrResponseMalformed, key, "content blocks must have a type")
		}
	}
	return out, nil
}

// Root is one of the client's roots: a URI (file:// in this revision)
// and an optional name for people.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Roots returns the roots of the ListRootsResult under key (possibly
// none). A missing response is ErrResponseMissing; one without a roots
// array, or with a root that has no uri, is ErrResponseMalformed (both
// an *Error, -32602).
func (r InputResponses) Roots(key string) ([]Root, error) {
	raw, err := r.get(key, "a roots result (an object with roots)")
	if err != nil {
		return nil, err
	}
	var res struct {
		Roots *[]Root `json:"roots"`
	}
	if codec.Unmarshal(raw, &res) != nil || res.Roots == nil {
		return nil, responseError(ErrResponseMalformed, key, "must be a roots result (an object with a roots array)")
	}
	for _, rt := range *res.Roots {
		if rt.URI == "" {
			return nil, responseError(ErrResponseMalformed, key, "every root must have a uri")
		}
	}
	if *res.Roots == nil {
		return []Root{}, nil
	}
	return *res.Roots, nil
}
