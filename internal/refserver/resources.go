package refserver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// Resource URIs of the fixtures.
const (
	URIStaticText   = "test://static-text"
	URIStaticBinary = "test://static-binary"
	URIWatched      = "test://watched-resource"
	URITemplate     = "test://template/{id}/data"
	URIClock        = "mcpwire://clock"
)

func (r *refServer) resources() []engine.Resource {
	return []engine.Resource{
		{
			URI: URIStaticText, Name: "static-text", MimeType: "text/plain",
			Description: "A static text resource",
			Handler: func(c *engine.Call, uri string, _ map[string]string) error {
				return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{
					URI: uri, MimeType: "text/plain", Text: "This is the content of the static text resource.",
				}}})
			},
		},
		{
			URI: URIStaticBinary, Name: "static-binary", MimeType: "image/png",
			Description: "A static binary resource (a 2x2 PNG)",
			Handler: func(c *engine.Call, uri string, _ map[string]string) error {
				return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{
					URI: uri, MimeType: "image/png", Blob: pngBase64(),
				}}})
			},
		},
		{
			URI: URIClock, Name: "clock", MimeType: "text/plain",
			Description: "The server's clock (RFC 3339); listeners subscribed to it get notifications/resources/updated every second",
			Handler: func(c *engine.Call, uri string, _ map[string]string) error {
				return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{
					URI: uri, MimeType: "text/plain", Text: time.Now().UTC().Format(time.RFC3339),
				}}})
			},
		},
		{
			URI: URIWatched, Name: "watched-resource", MimeType: "text/plain",
			Description: "A resource to subscribe to on subscriptions/listen; the touch tool signals an update",
			Handler: func(c *engine.Call, uri string, _ map[string]string) error {
				return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{
					URI: uri, MimeType: "text/plain", Text: "Watched resource content",
				}}})
			},
		},
	}
}

func (r *refServer) templates() []engine.ResourceTemplate {
	return []engine.ResourceTemplate{{
		// Any test://load/NAME or mcpwire://NAME URI can be listened to and
		// touched (load tools pick their own); reading one returns its URI.
		URITemplate: "mcpwire://{name}", Name: "mcpwire-any", MimeType: "text/plain",
		Description: "Any mcpwire://NAME resource: the touch tool publishes its updates",
		Handler:     readOwnURI,
	}, {
		URITemplate: "test://load/{name}", Name: "test-load-any", MimeType: "text/plain",
		Description: "Any test://load/NAME resource: the touch tool publishes its updates",
		Handler:     readOwnURI,
	}, {
		URITemplate: URITemplate, Name: "template", MimeType: "application/json",
		Description: "A resource template; reading test://template/ID/data returns a JSON document naming ID",
		Handler: func(c *engine.Call, uri string, vars map[string]string) error {
			id := vars["id"]
			doc, err := json.Marshal(struct {
				ID           string `json:"id"`
				TemplateTest bool   `json:"templateTest"`
				Data         string `json:"data"`
			}{id, true, "Data for ID: " + id})
			if err != nil {
				return err
			}
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{
				URI: uri, MimeType: "application/json", Text: string(doc),
			}}})
		},
	}}
}

// prompts ----------------------------------------------------------------------

func (r *refServer) prompts() []engine.Prompt {
	return []engine.Prompt{
		{
			Name: "test_simple_prompt", Title: "Simple prompt",
			Description: "A prompt without arguments",
			Handler: func(c *engine.Call) error {
				return c.Return(mcp.PromptResult{
					Description: "A simple prompt",
					Messages: []mcp.PromptMessage{
						{Role: "user", Content: mcp.TextContent("This is a simple prompt for testing.")},
					},
				})
			},
		},
		{
			Name: "test_prompt_with_arguments", Title: "Prompt with arguments",
			Description: "A prompt whose text uses its two required arguments",
			Arguments: []mcp.PromptArgument{
				{Name: "arg1", Description: "First argument", Required: true},
				{Name: "arg2", Description: "Second argument", Required: true},
			},
			Handler: func(c *engine.Call) error {
				a1, err := promptArg(c, "arg1")
				if err != nil {
					return err
				}
				a2, err := promptArg(c, "arg2")
				if err != nil {
					return err
				}
				return c.Return(mcp.PromptResult{
					Description: "A prompt with arguments",
					Messages: []mcp.PromptMessage{
						{Role: "user", Content: mcp.TextContent("Prompt with arguments: arg1='" + a1 + "', arg2='" + a2 + "'")},
					},
				})
			},
		},
		{
			Name: "test_prompt_with_embedded_resource", Title: "Prompt with an embedded resource",
			Description: "A prompt that embeds the resource named by resourceUri",
			Arguments: []mcp.PromptArgument{
				{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
			},
			Handler: func(c *engine.Call) error {
				uri, err := promptArg(c, "resourceUri")
				if err != nil {
					return err
				}
				return c.Return(mcp.PromptResult{
					Description: "A prompt with an embedded resource",
					Messages: []mcp.PromptMessage{
						{Role: "user", Content: mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
							URI: uri, MimeType: "text/plain", Text: "Embedded resource content for testing.",
						}}},
						{Role: "user", Content: mcp.TextContent("Please process the embedded resource above.")},
					},
				})
			},
		},
		{
			Name: "test_prompt_with_image", Title: "Prompt with an image",
			Description: "A prompt that includes image content",
			Handler: func(c *engine.Call) error {
				return c.Return(mcp.PromptResult{
					Description: "A prompt with an image",
					Messages: []mcp.PromptMessage{
						{Role: "user", Content: imageContent()},
						{Role: "user", Content: mcp.TextContent("Please analyze the image above.")},
					},
				})
			},
		},
		{
			Name:        "test_input_required_result_prompt",
			Description: "MRTR on prompts/get: asks for context with an in-band elicitation, then returns a prompt using it",
			Handler:     r.irPrompt,
		},
	}
}

// promptArg returns the required string argument name of a prompts/get.
func promptArg(c *engine.Call, name string) (string, error) {
	s, ok := c.ArgString(name)
	if !ok {
		return "", codec.NewError(codec.CodeInvalidParams, "Invalid params: missing required argument "+name)
	}
	return s, nil
}

// completion -----------------------------------------------------------------------

// completions lists the candidate values per reference and argument.
var completions = map[string]map[string][]string{
	"ref/prompt test_prompt_with_arguments": {
		"arg1": {"alpha", "apple", "apricot", "test", "testValue1", "testing"},
		"arg2": {"beta", "banana", "test", "testValue2"},
	},
	"ref/prompt test_prompt_with_embedded_resource": {
		"resourceUri": {URIStaticBinary, URIStaticText, URIWatched},
	},
	"ref/prompt test_simple_prompt":                {},
	"ref/prompt test_prompt_with_image":            {},
	"ref/prompt test_input_required_result_prompt": {},
	"ref/resource " + URITemplate: {
		"id": {"1", "2", "3", "42", "123"},
	},
}

// maxCompletionValues is the schema's bound on completion.values.
const maxCompletionValues = 100

var errBadComplete = codec.NewError(codec.CodeInvalidParams, "Invalid params: completion/complete needs ref {type, name|uri} and argument {name, value}")

// complete serves completion/complete: the candidates of the argument that
// start with the value typed so far (case-insensitively).
func (r *refServer) complete(c *engine.Call) error {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument *struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
	}
	if err := codec.Unmarshal(c.Params(), &p); err != nil || p.Ref == nil || p.Argument == nil ||
		p.Argument.Name == nil || p.Argument.Value == nil {
		return errBadComplete
	}
	var key string
	switch p.Ref.Type {
	case "ref/prompt":
		key = p.Ref.Type + " " + p.Ref.Name
	case "ref/resource":
		key = p.Ref.Type + " " + p.Ref.URI
	default:
		return errBadComplete
	}
	args, ok := completions[key]
	if !ok {
		return codec.NewError(codec.CodeInvalidParams, "Invalid params: unknown completion reference")
	}
	prefix := strings.ToLower(*p.Argument.Value)
	values := []string{}
	for _, v := range args[*p.Argument.Name] {
		if strings.HasPrefix(strings.ToLower(v), prefix) {
			values = append(values, v)
		}
	}
	res := mcp.CompleteResult{Completion: mcp.Completion{Values: values, Total: len(values)}}
	if len(values) > maxCompletionValues {
		res.Completion.Values = values[:maxCompletionValues]
		res.Completion.HasMore = true
	}
	return c.Return(res)
}

func readOwnURI(c *engine.Call, uri string, _ map[string]string) error {
	return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{
		URI: uri, MimeType: "text/plain", Text: uri,
	}}})
}

// tickClock publishes an update of mcpwire://clock every second until the
// server shuts down.
func tickClock(srv *engine.Server) {
	srv.Go(func(ctx context.Context) {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				srv.ResourceUpdated(URIClock)
			}
		}
	})
}
