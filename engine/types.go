package engine

import "github.com/mcpwire/mcpwire/mcp"

//go:fix inline
type Implementation = mcp.Implementation

//go:fix inline
type Content = mcp.Content

//go:fix inline
type ResourceContents = mcp.ResourceContents

//go:fix inline
type ToolResult = mcp.ToolResult

//go:fix inline
type ReadResourceResult = mcp.ReadResourceResult

//go:fix inline
type PromptMessage = mcp.PromptMessage

//go:fix inline
type PromptResult = mcp.PromptResult

//go:fix inline
type Completion = mcp.Completion

//go:fix inline
type CompleteResult = mcp.CompleteResult

//go:fix inline
type InputRequest = mcp.InputRequest

//go:fix inline
type InputRequired = mcp.InputRequired

//go:fix inline
func TextContent(s string) Content { return mcp.TextContent(s) }
