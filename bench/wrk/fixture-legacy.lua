-- wrk script: the standard fixture as a 2025-11-25 client sends it to the
-- legacy endpoint (serve --legacy-path): a tools/call echo
-- {"text":"hello world"} with a progressToken, no 2026 _meta or mirrored
-- headers. The harness initializes a session first and appends its
-- Mcp-Session-Id header to a copy of this script, then, once it has
-- checked the reply, a request function that gives every request its own
-- 9-digit id in place of 100000001 (a session refuses an id still in
-- flight, and the 64 connections share one session).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.body = '{"jsonrpc":"2.0","id":100000001,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":1}}}'
