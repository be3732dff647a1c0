// interop-legacy-client.mjs — drive a 2025-11-25 MCP endpoint through the
// TypeScript SDK v1 client (@modelcontextprotocol/sdk, pinned in
// interop/npm/legacy), over Streamable HTTP (sessions, GET stream) or stdio.
//
//   node interop-legacy-client.mjs [--version V] [--tool NAME --expect TEXT]
//        [--trigger TOOL] [--elicit TOOL] [--sample TOOL] [--touch TOOL --uri URI] [--wait MS]
//        (--url URL | -- SERVER_COMMAND ARGS...)
//
// .ci/interop-legacy.sh copies this file next to the installed package (ESM
// resolves imports from the file's own folder) and runs it there.
//
// Steps, each of which must pass:
//   connect    the initialize handshake; the server's answer names --version
//              (default 2025-11-25); over HTTP it issued an Mcp-Session-Id
//   ping, logging/setLevel
//   tools/list lists --tool and --trigger (and --touch)
//   tools/call --tool (default test_simple_text) answers one text content
//              containing --expect
//   --trigger  (default test_trigger_tool_change) makes
//              notifications/tools/list_changed arrive; over HTTP only a GET
//              stream can carry it, which .ci/mcptap.mjs check --legacy verifies
//   --elicit TOOL, --sample TOOL: the tool's call reaches the client as an
//              elicitation/create (answered accept, every required string
//              property a fixed name) or sampling/createMessage (a fixed
//              text), and the result carries that answer
//   --touch    with --uri: resources/subscribe {uri}, call the tool with
//              {uri}, notifications/resources/updated {uri} must arrive
//   HTTP only: a GET stream was opened and answered 200 text/event-stream
//              at once, before anything was published on it;
//              DELETE with the session id is answered 2xx (not 405: our
//              endpoint lets clients end sessions); then a POST with the
//              ended session id is answered 404
//   close      the client closes; on stdio the server must exit on its own
//              when its stdin ends (the SDK waits 2 s before SIGTERM)
// One JSON object per step on stdout, the last one the verdict; exit 0 only
// when every step passed.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
const dd = argv.indexOf('--');
const flags = dd >= 0 ? argv.slice(0, dd) : argv;
const command = dd >= 0 ? argv.slice(dd + 1) : [];
const opt = (name, dflt) => {
  const i = flags.indexOf(name);
  return i >= 0 && i + 1 < flags.length ? flags[i + 1] : dflt;
};
const url = opt('--url', '');
const version = opt('--version', '2025-11-25');
const tool = opt('--tool', 'test_simple_text');
const expect = opt('--expect', 'This is a simple text response for testing');
const trigger = opt('--trigger', 'test_trigger_tool_change');
const touch = opt('--touch', '');
const uri = opt('--uri', '');
const elicitTool = opt('--elicit', '');
const sampleTool = opt('--sample', '');
const waitMs = Number(opt('--wait', '5000'));
// What the client answers to the server's requests, and must then find in
// the tool's result.
const NAME = 'Ada Lovelace';
const ANSWER = 'Paris, said the interop client';
if (!url === (command.length === 0) || !touch !== !uri) {
  console.error('usage: interop-legacy-client.mjs [flags] (--url URL | -- SERVER_COMMAND ARGS...)');
  process.exit(2);
}
const transportName = url ? 'http' : 'stdio';
const t0 = Date.now();

function emit(step, ok, fields = {}) {
  console.log(JSON.stringify({ client: 'ts-sdk-v1', transport: transportName, step, ok, ms: Date.now() - t0, ...fields }));
}
function fail(step, err) {
  emit(step, false, { error: String(err?.message ?? err) });
  emit('verdict', false, { failedStep: step });
  process.exit(1);
}
async function step(name, fn) {
  try {
    return await fn();
  } catch (e) {
    fail(name, e);
  }
}
function within(promise, name, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${waitMs} ms`)), waitMs);
  });
  return step(name, () => Promise.race([promise, timeout]).finally(() => clearTimeout(timer)));
}
process.on('unhandledRejection', (e) => fail('unhandled', e));

// Every HTTP exchange the SDK makes, as the SDK saw it (once its response
// headers arrived).
const exchanges = [];
let gotGET;
const getAnswered = new Promise((resolve) => (gotGET = resolve));
const recordingFetch = async (input, init) => {
  const res = await fetch(input, init);
  if ((init?.method ?? 'GET') === 'GET') gotGET();
  exchanges.push({
    method: init?.method ?? 'GET',
    status: res.status,
    ctype: res.headers.get('content-type') ?? '',
    session: new Headers(init?.headers ?? {}).get('mcp-session-id')
  });
  return res;
};

const capabilities = {};
if (elicitTool) capabilities.elicitation = {};
if (sampleTool) capabilities.sampling = {};
const client = new Client({ name: 'mcpwire-interop-legacy', version: '0.1.0' }, { capabilities });
// Server-to-client requests: an elicitation gets NAME in every string
// property its schema requires; a sampling request gets ANSWER.
const asked = { 'elicitation/create': 0, 'sampling/createMessage': 0 };
if (elicitTool) {
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked['elicitation/create']++;
    const schema = req.params.requestedSchema ?? {};
    const content = {};
    for (const key of schema.required ?? Object.keys(schema.properties ?? {})) content[key] = NAME;
    return { action: 'accept', content };
  });
}
if (sampleTool) {
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    asked['sampling/createMessage']++;
    return { role: 'assistant', content: { type: 'text', text: ANSWER }, model: 'interop-legacy' };
  });
}
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch })
  : new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'inherit' });
// The SDK hands the initialize result's protocolVersion to the transport;
// the stdio transport has no such hook, so one is added to learn it.
let negotiated;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  negotiated = v;
  setVersion?.(v);
};
let transportError;
transport.onerror = (e) => (transportError ??= e);

await step('connect', () => client.connect(transport));
const session = url ? transport.sessionId : undefined;
emit('connect', true, { negotiated, session, server: client.getServerVersion() });
if (negotiated !== version) fail('connect', `initialize answered protocolVersion ${negotiated}, want ${version}`);
if (url && !/^[\x21-\x7e]+$/.test(session ?? '')) fail('connect', `no usable Mcp-Session-Id issued (got ${JSON.stringify(session)})`);

if (url) {
  // The SDK opens the GET stream after notifications/initialized. Nothing
  // has been published yet, so only a server that sends the stream's
  // headers at once answers it now.
  await within(getAnswered, 'GET stream', 'answer to the GET (status and headers) before any event was due');
}
await step('ping', () => client.ping());
emit('ping', true);
await step('logging/setLevel', () => client.setLoggingLevel('info'));
emit('logging/setLevel', true);

const names = await step('tools/list', async () => (await client.listTools()).tools.map((t) => t.name));
for (const want of [tool, trigger, touch].filter(Boolean)) {
  if (!names.includes(want)) fail('tools/list', `tool ${want} not listed (got ${names.join(',')})`);
}
emit('tools/list', true, { count: names.length });

const res = await step(`tools/call ${tool}`, () => client.callTool({ name: tool, arguments: {} }));
const texts = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
if (res.isError) fail(`tools/call ${tool}`, `isError result: ${JSON.stringify(texts)}`);
if (texts.length !== 1 || !texts[0].includes(expect)) {
  fail(`tools/call ${tool}`, `got text content ${JSON.stringify(texts)}, want one containing ${JSON.stringify(expect)}`);
}
emit(`tools/call ${tool}`, true, { text: texts[0] });

let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
const trig = await step(`tools/call ${trigger}`, () => client.callTool({ name: trigger, arguments: {} }));
if (trig.isError) fail(`tools/call ${trigger}`, 'isError result');
emit(`tools/call ${trigger}`, true);
await within(listChanged, 'notifications/tools/list_changed', 'notifications/tools/list_changed');
emit('notifications/tools/list_changed', true);

// MRTR tools (or 2025-style ones) reach the client as requests on the
// tools/call's stream; the answer must come back in the result.
// (The arguments are what the go-sdk everything-server's 2025-style tools
// take; the reference server's MRTR tools take none and ignore them.)
for (const [tool, method, want, args] of [
  [elicitTool, 'elicitation/create', NAME, { message: 'interop-legacy asks' }],
  [sampleTool, 'sampling/createMessage', ANSWER, { prompt: 'interop-legacy asks' }]
]) {
  if (!tool) continue;
  const before = asked[method];
  const r = await step(`tools/call ${tool}`, () => client.callTool({ name: tool, arguments: args }));
  const text = (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  if (asked[method] === before) fail(`tools/call ${tool}`, `no ${method} request reached the client`);
  if (r.isError || !text.includes(want)) fail(`tools/call ${tool}`, `result ${JSON.stringify(text)} does not carry the ${method} answer ${JSON.stringify(want)}`);
  emit(`tools/call ${tool}`, true, { [method]: asked[method] - before, text });
}

if (touch) {
  let updated;
  const gotUpdate = new Promise((resolve) => (updated = resolve));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === uri) updated();
  });
  await step('resources/subscribe', () => client.subscribeResource({ uri }));
  emit('resources/subscribe', true, { uri });
  const t = await step(`tools/call ${touch}`, () => client.callTool({ name: touch, arguments: { uri } }));
  if (t.isError) fail(`tools/call ${touch}`, 'isError result');
  await within(gotUpdate, 'notifications/resources/updated', `notifications/resources/updated for ${uri}`);
  emit('notifications/resources/updated', true, { uri });
  await step('resources/unsubscribe', () => client.unsubscribeResource({ uri }));
  emit('resources/unsubscribe', true);
}

if (url) {
  const get = exchanges.find((x) => x.method === 'GET');
  if (!get) fail('GET stream', 'the SDK opened no GET stream');
  if (get.status !== 200 || !get.ctype.startsWith('text/event-stream')) {
    fail('GET stream', `GET answered ${get.status} ${get.ctype}, want 200 text/event-stream`);
  }
  if (get.session !== session) fail('GET stream', `GET carried Mcp-Session-Id ${JSON.stringify(get.session)}`);
  emit('GET stream', true);

  await step('DELETE', () => transport.terminateSession());
  const del = exchanges.find((x) => x.method === 'DELETE');
  if (!del || del.status < 200 || del.status > 299) fail('DELETE', `DELETE answered ${del?.status}, want 2xx`);
  emit('DELETE', true, { status: del.status });

  // The session is over: the server must not know its id any more.
  const after = await step('after DELETE', () =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session,
        'mcp-protocol-version': version
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'after-delete', method: 'tools/list', params: {} })
    })
  );
  await after.body?.cancel();
  if (after.status !== 404) fail('after DELETE', `a POST with the ended session id was answered ${after.status}, want 404`);
  emit('after DELETE', true, { status: after.status });
}

const closing = Date.now();
await step('close', () => client.close());
const closeMs = Date.now() - closing;
// The SDK's stdio close ends the server's stdin, waits 2 s, then SIGTERMs.
if (!url && closeMs >= 1900) fail('close', `the server did not exit within ${closeMs} ms of its stdin ending`);
if (transportError) fail('close', `transport error during the run: ${transportError.message ?? transportError}`);
emit('close', true, { closeMs });
emit('verdict', true);
process.exit(0);
