// ts-v2-server.mjs — a small MCP server on the TypeScript SDK v2
// (@modelcontextprotocol/server 2.4.0 with the Node adapter
// @modelcontextprotocol/node 2.1.2, pinned in interop/npm/sdkv2, installed by
// .ci/tools.sh sdkv2). It serves 2026-07-28 and, through the SDK's defaults,
// 2025-era clients too. .ci/interop-client.sh copies it next to that
// node_modules and runs it two ways:
//
//   node ts-v2-server.mjs --port PORT   Streamable HTTP on http://127.0.0.1:PORT/mcp
//   node ts-v2-server.mjs --stdio       stdio (newline-delimited JSON-RPC)
//
// Tools:
//   echo   {text}    returns text unchanged
//   count  {n}       progress 1..n (at most 10) when the request carries a
//                    progressToken, then "counted to n"
//   region {region}  region is declared with x-mcp-header "Region", so a
//                    2026-07-28 HTTP client must mirror it in Mcp-Param-Region
//                    (the SDK validates the header before the handler runs);
//                    returns "region=<region>"
import http from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema, localhostAllowedHostnames, hostHeaderValidationResponse } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';

const argv = process.argv.slice(2);
const stdio = argv.includes('--stdio');
const i = argv.indexOf('--port');
const port = i >= 0 ? Number(argv[i + 1]) : 0;

function newServer() {
  const server = new McpServer({ name: 'mcpwire-interop-ts-v2', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'echo',
    {
      description: 'Returns its text argument',
      inputSchema: fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
    },
    async ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }),
  );
  server.registerTool(
    'count',
    {
      description: 'Counts to n, with a progress notification per step when asked for progress',
      inputSchema: fromJsonSchema({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }),
    },
    async ({ n }, ctx) => {
      const total = Math.max(1, Math.min(Number(n) || 1, 10));
      const token = ctx.mcpReq._meta?.progressToken;
      for (let k = 1; k <= total; k++) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: k, total } });
        }
      }
      return { content: [{ type: 'text', text: `counted to ${total}` }] };
    },
  );
  server.registerTool(
    'region',
    {
      description: 'Returns its region argument, which is also sent as the Mcp-Param-Region header',
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      }),
    },
    async ({ region }) => ({ content: [{ type: 'text', text: `region=${region}` }] }),
  );
  return server;
}

const onerror = (err) => console.error(`ts-v2-server: ${err?.stack ?? err}`);

if (stdio) {
  serveStdio(newServer, { onerror });
} else {
  const handler = createMcpHandler(newServer, { onerror });
  const allowed = localhostAllowedHostnames();
  const serve = toNodeHandler(
    {
      // Loopback only: refuse a non-local Host header before the MCP handler.
      fetch: (request, options) => hostHeaderValidationResponse(request, allowed) ?? handler.fetch(request, options),
    },
    { onerror },
  );
  const httpServer = http.createServer((req, res) => {
    if (new URL(req.url, 'http://localhost').pathname !== '/mcp') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    serve(req, res).catch((err) => {
      onerror(err);
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end();
    });
  });
  httpServer.listen(port, '127.0.0.1', () => {
    console.error(`ts-v2-server: listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
}
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
