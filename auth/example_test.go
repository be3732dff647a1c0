package auth_test

import (
	"fmt"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// A Streamable HTTP server as an OAuth resource server: tokens of one
// issuer, for this endpoint, with the scope mcp; the deploy tool also
// needs ops. Nothing is fetched until the first token arrives.
func ExampleVerifier_Install() {
	v, err := auth.New(auth.Config{
		Resource:   "https://mcp.example.com/mcp",
		Issuer:     "https://login.example.com",
		Scopes:     []string{"mcp"},
		ToolScopes: map[string][]string{"deploy": {"ops"}},
	})
	if err != nil {
		panic(err)
	}
	var cfg streamhttp.Config
	v.Install(&cfg)
	fmt.Println(cfg.ResourceMetadata)
	fmt.Println(v.MetadataPaths())
	// Output:
	// https://mcp.example.com/.well-known/oauth-protected-resource/mcp
	// [/.well-known/oauth-protected-resource/mcp /.well-known/oauth-protected-resource]
}

// Handlers read the verified caller with PrincipalOf.
func ExamplePrincipalOf() {
	_ = func(c *engine.Call) error {
		p := auth.PrincipalOf(c) // nil when the call was not authenticated by a Verifier
		if p == nil || !p.HasScope("ops") {
			return fmt.Errorf("not allowed")
		}
		c.Text("deployed by " + p.Subject)
		return nil
	}
}
