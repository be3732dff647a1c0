// Package schemalib compares the two JSON Schema validators a Go MCP server
// would pick for tool arguments — github.com/santhosh-tekuri/jsonschema/v6
// (what engine.AddTool compiles InputSchema with) and
// github.com/google/jsonschema-go (what go-sdk uses) — on the cost of
// checking one tools/call's arguments, and on what their errors say. It
// holds benchmarks and tests only.
package schemalib
