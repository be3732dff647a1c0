package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/oauth"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/mcp"
)

// runConformanceClient is the hidden `mcpwire conformance-client URL`: the
// client the official conformance suite runs as `client --command`. The
// harness appends the scenario server's URL as the last argument and names
// the scenario in MCP_CONFORMANCE_SCENARIO, the revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION and scenario data (tool calls to make)
// in MCP_CONFORMANCE_CONTEXT. Each scenario is driven through the public
// client API only (client/, client/target), the way an
// application would use it; the checks are the harness's. The exit status
// is non-zero when a step the scenario needs failed.
//
// The auth/* scenarios run the OAuth flow of client/oauth
// (conformanceOAuth) and then list and call the tools.
func runConformanceClient(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("conformance-client: the server URL must be the last argument")
	}
	url := args[len(args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	run, ok := conformanceScenarios[scenario]
	if !ok && strings.HasPrefix(scenario, "auth/") {
		run, ok = authScenario, true
	}
	if !ok {
		return fmt.Errorf("conformance-client: scenario %q is not supported", scenario)
	}
	var sc scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return fmt.Errorf("conformance-client: MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := target.Config{Logger: logger, StopWait: time.Second}
	o.Client.Info = mcp.Implementation{Name: "mcpwire-conformance-client", Version: refserverVersion()}
	o.Client.Timeout = 10 * time.Second
	o.Client.ProbeTimeout = 5 * time.Second
	o.Client.OnInput = answerInput
	if v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v != "" {
		if v != client.Version2026 {
			return fmt.Errorf("conformance-client: revision %s: only %s is driven here", v, client.Version2026)
		}
		o.Client.Version = v
	}
	if strings.HasPrefix(scenario, "auth/") {
		cfg, err := conformanceOAuth(scenario, sc)
		if err != nil {
			return err
		}
		o.OAuth = cfg
	}
	c, err := target.Open(url, o)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 25*time.Second) // the harness kills the client at 30 s
	defer cancel()
	cc := &confClient{c: c, sc: sc}
	if err := run(ctx, cc); err != nil {
		return fmt.Errorf("conformance-client %s: %w", scenario, err)
	}
	fmt.Printf("conformance-client %s: done (era %s, revision %s)\n", scenario, c.Era(), c.ProtocolVersion())
	return nil
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT: the scenario's name plus
// whatever data it hands the client.
type scenarioContext struct {
	Name string `json:"name"`
	// The auth/* scenarios: a pre-registered client, and the
	// authorization server it is registered with.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Issuer       string `json:"issuer"`
	// auth/client-credentials-jwt: the client's key (PKCS #8 PEM).
	PrivateKeyPEM string `json:"private_key_pem"`
	// auth/wif-jwt-bearer: the workload's JWT.
	ValidJWT string `json:"valid_jwt"`
	// auth/enterprise-managed-authorization: the user's ID token at the
	// enterprise identity provider, and that provider.
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	ToolCalls        []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
}

type confClient struct {
	c  *client.Client
	sc scenarioContext
}

var conformanceScenarios = map[string]func(context.Context, *confClient) error{
	// tools/list, then add_numbers with numbers.
	"tools_call": func(ctx context.Context, cc *confClient) error {
		if _, err := cc.listTools(ctx); err != nil {
			return err
		}
		return cc.call(ctx, "add_numbers", json.RawMessage(`{"a":5,"b":3}`), "8")
	},
	// The first request is refused with -32022; the retry and every later
	// request must carry 2026-07-28 in the header and in _meta.
	"request-metadata": func(ctx context.Context, cc *confClient) error {
		d, err := cc.c.Probe(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("probe: era %s, revision %s, server %s %s\n", cc.c.Era(), cc.c.ProtocolVersion(), termSafe(d.Info.Name), termSafe(d.Info.Version))
		if cc.c.Era() != client.EraModern {
			return fmt.Errorf("era %s, want modern", cc.c.Era())
		}
		_, err = cc.listTools(ctx)
		return err
	},
	// MRTR: requestState echoed byte for byte with a new id, no state when
	// none was given, nothing carried over to an unrelated call, a result
	// without resultType read as complete.
	"sep-2322-client-request-state": func(ctx context.Context, cc *confClient) error {
		if _, err := cc.listTools(ctx); err != nil {
			return err
		}
		for _, step := range []struct{ tool, want string }{
			{"test_mrtr_echo_state", "echo-state-ok"},
			{"test_mrtr_unrelated", "unrelated-ok"},
			{"test_mrtr_no_state", "no-state-ok"},
			{"test_mrtr_no_result_type", "no-result-type-test-ok"},
		} {
			if err := cc.call(ctx, step.tool, nil, step.want); err != nil {
				return err
			}
		}
		return nil
	},
	// Mcp-Method on every request, Mcp-Name on tools/call, resources/read
	// and prompts/get: exercise each method on everything listed.
	"http-standard-headers": func(ctx context.Context, cc *confClient) error {
		if err := cc.callEveryTool(ctx); err != nil {
			return err
		}
		res, err := cc.c.List(ctx, "resources/list", "resources")
		if err != nil {
			return err
		}
		for _, raw := range res {
			var r struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(raw, &r) != nil || r.URI == "" {
				continue
			}
			if _, err := cc.c.ReadResource(ctx, r.URI); err != nil {
				return fmt.Errorf("resources/read %s: %w", r.URI, err)
			}
			fmt.Printf("resources/read %s: ok\n", termSafe(r.URI))
		}
		prompts, err := cc.c.List(ctx, "prompts/list", "prompts")
		if err != nil {
			return err
		}
		for _, raw := range prompts {
			var p struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(raw, &p) != nil || p.Name == "" {
				continue
			}
			if _, err := cc.c.GetPrompt(ctx, p.Name, nil); err != nil {
				return fmt.Errorf("prompts/get %s: %w", p.Name, err)
			}
			fmt.Printf("prompts/get %s: ok\n", termSafe(p.Name))
		}
		return nil
	},
	// x-mcp-header: list the tools (learning their annotations), then make
	// the calls the scenario asks for; the Mcp-Param-* headers are the
	// client's business.
	"http-custom-headers": func(ctx context.Context, cc *confClient) error {
		if _, err := cc.listTools(ctx); err != nil {
			return err
		}
		if len(cc.sc.ToolCalls) == 0 {
			return errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls")
		}
		for _, tc := range cc.sc.ToolCalls {
			if err := cc.call(ctx, tc.Name, tc.Arguments, ""); err != nil {
				return err
			}
		}
		return nil
	},
	// Tools with invalid x-mcp-header annotations are dropped by ListTools
	// (PARAM-03); call every tool that is left.
	"http-invalid-tool-headers": func(ctx context.Context, cc *confClient) error {
		return cc.callEveryTool(ctx)
	},
	// tools/list against a tool whose schema has a network $ref: the client
	// must not fetch it (it never resolves $ref at all).
	"json-schema-ref-no-deref": func(ctx context.Context, cc *confClient) error {
		tools, err := cc.listTools(ctx)
		if err != nil {
			return err
		}
		if len(tools) == 0 {
			return errors.New("tools/list returned no tools")
		}
		return nil
	},
}

// conformanceCIMD is the Client ID Metadata Document URL the suite
// expects a client to use as client_id where the authorization server
// accepts one (auth/basic-cimd).
const conformanceCIMD = "https://conformance-test.local/client-metadata.json"

// conformanceOAuth configures the OAuth flow for an auth/* scenario: the
// suite's mock authorization server approves at once, so the
// authorization URL is followed headlessly and the code read from the
// redirect. A client id in the context is a pre-registered client (with
// a secret, or a private key: private_key_jwt); auth/client-credentials-*
// use the client credentials grant, auth/wif-jwt-bearer the JWT bearer
// grant with the workload JWT of the context, and
// auth/enterprise-managed-authorization the JWT bearer grant with an
// ID-JAG the identity provider exchanged the context's ID token for.
func conformanceOAuth(scenario string, sc scenarioContext) (*oauth.Config, error) {
	cfg := &oauth.Config{
		ClientName:        "mcpwire-conformance-client",
		RedirectURL:       "http://localhost:3000/callback",
		Authorize:         oauth.FollowRedirect(nil),
		ClientMetadataURL: conformanceCIMD,
		OfflineAccess:     true,
		DPoP:              true,
		ClientID:          sc.ClientID,
		ClientSecret:      sc.ClientSecret,
		Issuer:            sc.Issuer,
	}
	if strings.HasPrefix(scenario, "auth/client-credentials-") {
		cfg.Grant = oauth.GrantClientCredentials
	}
	if scenario == "auth/wif-jwt-bearer" {
		jwt := sc.ValidJWT
		cfg.Grant = oauth.GrantJWTBearer
		cfg.Assertion = func(context.Context, string, string) (string, error) { return jwt, nil }
	}
	if scenario == "auth/enterprise-managed-authorization" {
		idToken := sc.IDPIDToken
		cfg.Grant = oauth.GrantJWTBearer
		cfg.Assertion = oauth.IDJAGAssertion(nil, sc.IDPTokenEndpoint, sc.IDPClientID,
			func(context.Context) (string, error) { return idToken, nil })
	}
	if sc.PrivateKeyPEM != "" {
		k, err := oauth.ParsePrivateKey([]byte(sc.PrivateKeyPEM))
		if err != nil {
			return nil, err
		}
		cfg.PrivateKey = k
	}
	return cfg, nil
}

// authScenario: the server challenges the first request; once
// authorized, list the tools and call each (a step-up scenario asks for
// more scope on tools/call).
func authScenario(ctx context.Context, cc *confClient) error {
	tools, err := cc.listTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := cc.call(ctx, t.Name, sampleArguments(t.InputSchema), ""); err != nil {
			return err
		}
	}
	return nil
}

// listTools runs tools/list and prints the names it kept.
func (cc *confClient) listTools(ctx context.Context) ([]mcp.Tool, error) {
	tools, err := cc.c.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = termSafe(t.Name)
	}
	fmt.Printf("tools/list (era %s): %s\n", cc.c.Era(), strings.Join(names, ", "))
	return tools, nil
}

// callEveryTool lists the tools and calls each with sample arguments.
func (cc *confClient) callEveryTool(ctx context.Context) error {
	tools, err := cc.listTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := cc.call(ctx, t.Name, sampleArguments(t.InputSchema), ""); err != nil {
			return err
		}
	}
	return nil
}

// call runs one tool; want, when set, must appear in the result's text.
func (cc *confClient) call(ctx context.Context, name string, args json.RawMessage, want string) error {
	var a any
	if len(args) > 0 {
		a = args
	}
	r, err := cc.c.CallTool(ctx, name, a, nil)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", name, err)
	}
	text := r.Text()
	fmt.Printf("tools/call %s: isError=%v %q\n", termSafe(name), r.IsError, text)
	if want != "" && !strings.Contains(text, want) {
		return fmt.Errorf("tools/call %s: result %q lacks %q", name, text, want)
	}
	return nil
}

// answerInput answers the embedded requests of an InputRequiredResult the
// way an unattended host would: elicitation accepted with a value for each
// requested field, a canned sampling message, no roots.
func answerInput(_ context.Context, key string, req mcp.InputRequest) (json.RawMessage, error) {
	fmt.Printf("input %s: %s\n", termSafe(key), termSafe(req.Method))
	switch req.Method {
	case "elicitation/create":
		var p struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		_ = req.DecodeParams(&p)
		content := map[string]any{}
		for _, f := range schemaProperties(p.RequestedSchema, false) {
			switch {
			case f.def != nil:
				content[f.name] = f.def
			case len(f.enum) > 0:
				content[f.name] = f.enum[0]
			default:
				content[f.name] = sampleValue(f.typ, true)
			}
		}
		return json.Marshal(map[string]any{"action": "accept", "content": content})
	case "sampling/createMessage":
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled by mcpwire conformance-client"},"model":"mcpwire-conformance","stopReason":"endTurn"}`), nil
	case "roots/list":
		return json.RawMessage(`{"roots":[]}`), nil
	}
	return nil, fmt.Errorf("input request %s is not supported", req.Method)
}

// field is one property of an object schema.
type field struct {
	name     string
	typ      string
	required bool
	def      any
	enum     []any
}

// schemaProperties lists the top-level properties of an object schema,
// sorted by name; with requiredOnly, only the required ones. It reads the
// schema as data: no $ref is followed.
func schemaProperties(schema json.RawMessage, requiredOnly bool) []field {
	var s struct {
		Properties map[string]struct {
			Type    any   `json:"type"`
			Default any   `json:"default"`
			Enum    []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	var out []field
	for name, p := range s.Properties {
		if requiredOnly && !req[name] {
			continue
		}
		typ, _ := p.Type.(string)
		if list, ok := p.Type.([]any); ok && len(list) > 0 {
			typ, _ = list[0].(string)
		}
		out = append(out, field{name: name, typ: typ, required: req[name], def: p.Default, enum: p.Enum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sampleArguments builds arguments for a tool from its input schema: a
// plausible value for each required property.
func sampleArguments(schema json.RawMessage) json.RawMessage {
	args := map[string]any{}
	for _, f := range schemaProperties(schema, true) {
		switch {
		case f.def != nil:
			args[f.name] = f.def
		case len(f.enum) > 0:
			args[f.name] = f.enum[0]
		default:
			args[f.name] = sampleValue(f.typ, false)
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// sampleValue is a value of JSON Schema type typ. Elicitation content has
// no fractional numbers (ElicitResult), so numbers are integers there too.
func sampleValue(typ string, elicitation bool) any {
	switch typ {
	case "boolean":
		return true
	case "integer":
		return 1
	case "number":
		if elicitation {
			return 1
		}
		return 1.5
	case "object":
		return map[string]any{}
	case "array":
		return []any{}
	case "null":
		return nil
	}
	return "us-west1"
}
