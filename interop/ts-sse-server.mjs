// ts-sse-server.mjs — a small MCP server on the deprecated 2024-11-05
// HTTP+SSE transport, built on the TypeScript SDK v1
// (@modelcontextprotocol/sdk 1.32.2, pinned in interop/npm/sdkv1, installed
// by .ci/tools.sh sdkv1). .ci/interop-client.sh copies it next to that
// node_modules and points our client at http://127.0.0.1:PORT/mcp, where
//   GET  /mcp                    opens the SSE stream (first event: endpoint)
//   POST /mcp                    405: no Streamable HTTP here, so a client
//                                falls back to HTTP+SSE (COMPAT-04)
//   POST /messages?sessionId=…   the endpoint the stream names
//
//   node ts-sse-server.mjs --port PORT
//
// Tools: echo {text}, add {a, b}, count {n} (progress 1..n when the request
// carries a progressToken).
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const i = process.argv.indexOf('--port');
const port = i >= 0 ? Number(process.argv[i + 1]) : 0;

const tools = [
  {
    name: 'echo',
    description: 'Returns its text argument',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
  {
    name: 'count',
    description: 'Counts to n, with a progress notification per step',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  },
];

function newServer() {
  const server = new Server({ name: 'mcpwire-interop-ts-sse', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const args = req.params.arguments ?? {};
    switch (req.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: String(args.text) }] };
      case 'add':
        return { content: [{ type: 'text', text: String(Number(args.a) + Number(args.b)) }] };
      case 'count': {
        const n = Math.min(Number(args.n) || 1, 10);
        const token = req.params._meta?.progressToken;
        for (let k = 1; k <= n; k++) {
          if (token !== undefined) {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: k, total: n } });
          }
        }
        return { content: [{ type: 'text', text: `counted to ${n}` }] };
      }
    }
    return { content: [{ type: 'text', text: `unknown tool ${req.params.name}` }], isError: true };
  });
  return server;
}

const streams = new Map(); // sessionId -> SSEServerTransport

const httpServer = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  try {
    if (url.pathname === '/mcp' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      streams.set(transport.sessionId, transport);
      res.on('close', () => streams.delete(transport.sessionId));
      await newServer().connect(transport);
      return;
    }
    if (url.pathname === '/mcp') {
      res.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain' }).end('Method Not Allowed');
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = streams.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('unknown session');
        return;
      }
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  } catch (err) {
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(String(err));
  }
});

httpServer.listen(port, '127.0.0.1', () => {
  console.error(`ts-sse-server: listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
