// Module goservers pins the third-party MCP servers that .ci/interop-client.sh
// runs our client against; .ci/tools.sh builds them (part "servers"). A
// nested module, so that go-sdk and mcp-go stay out of the library's go.mod.
module github.com/mcpwire/mcpwire/interop/goservers

go 1.26.8

tool (
	github.com/mark3labs/mcp-go/examples/conformance
	github.com/mark3labs/mcp-go/examples/everything
	github.com/modelcontextprotocol/go-sdk/conformance/everything-server
)

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
