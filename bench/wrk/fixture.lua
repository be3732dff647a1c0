-- wrk script: the standard fixture, as real clients send it: a 2026-07-28
-- tools/call echo {"text":"hello world"} with the mirrored headers and
-- _meta carrying protocolVersion, clientCapabilities, clientInfo and a
-- progressToken. `wrk -s fixture.lua` sends it unchanged on every request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}'
