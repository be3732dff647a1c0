package codec

// Wire vectors copied byte-exact from /work/shared/spec/EXAMPLES.md.
const (
	// §1 server/discover request (255 bytes).
	vecDiscover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// §1 discover response (316 bytes).
	vecDiscoverResp = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}}`
	// §2 tools/call request (354 bytes).
	vecToolsCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1","priority":42,"dry_run":false,"query":"SELECT 1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// §2 tools/call response (208 bytes).
	vecToolsCallResp = `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"1 row"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}}`
	// §2b tools/call with a non-ASCII argument (323 bytes).
	vecToolsCallZurich = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"Zürich","query":"SELECT 1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// §2d resources/read (296 bytes).
	vecResourcesRead = `{"jsonrpc":"2.0","id":30,"method":"resources/read","params":{"uri":"file:///projects/app/config.json","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	// §3 tools/call with progressToken (357 bytes).
	vecToolsCallProgress = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1","query":"SELECT * FROM big"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok-3"}}}`
	vecProgress1         = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-3","progress":0.25,"total":1,"message":"scanning"}}`
	vecProgress2         = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-3","progress":0.75,"total":1}}`
	vecProgressResp      = `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[{"type":"text","text":"1000 rows"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}}`
	// §4 notifications/cancelled (101 bytes).
	vecCancelled = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user aborted"}}`
	// §5 header mismatch request and error response (278 / 137 bytes).
	vecMismatchReq  = `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"bar","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	vecMismatchResp = `{"jsonrpc":"2.0","id":6,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'"}}`
	// §6 unsupported version error response (150 bytes).
	vecUnsupportedResp = `{"jsonrpc":"2.0","id":8,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}`
	// §7 missing _meta keys request.
	vecNoMeta = `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{}}`
	// §7 legacy initialize.
	vecLegacyInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"LegacyClient","version":"1.0.0"}}}`
	// §8 subscriptions/listen (393 bytes) and its final response.
	vecListen     = `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}`
	vecListenResp = `{"jsonrpc":"2.0","id":"listen-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1","io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}}}}`
	// §9a stdio: numeric progressToken and cancel.
	vecStdioCall   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1","query":"SELECT * FROM big"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}}}`
	vecStdioCancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"User requested cancellation"}}`
	// §9c probe with an unserved version, and its error.
	vecProbe     = `{"jsonrpc":"2.0","id":"probe-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	vecProbeResp = `{"jsonrpc":"2.0","id":"probe-1","error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}`
	// §9d unparseable line and the parse error reply.
	vecTruncatedLine = `{"jsonrpc":"2.0","id":1,"method":`
	vecParseErrResp  = `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`
	// §10 MRTR round 2.
	vecMRTR2 = `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"prod"},"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":"c3RlcC0x.sig","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`
)
