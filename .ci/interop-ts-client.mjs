// interop-ts-client.mjs — drive an MCP server through the TypeScript SDK v2
// client (@modelcontextprotocol/client, pinned in interop/npm/clients),
// pinned to protocol revision 2026-07-28, over Streamable HTTP or stdio.
//
//   node interop-ts-client.mjs [--version V] [--text T] [--trigger TOOL] [--wait MS]
//                              (--url URL | -- SERVER_COMMAND ARGS...)
//
// .ci/interop.sh copies this file next to the installed package (ESM
// resolves imports from the file's own folder) and runs it there.
//
// The script is the same as the Go interop clients' (interop/goclients/internal/flow):
// connect with versionNegotiation {pin}, the negotiated revision must be the
// pin; tools/list lists echo and TOOL; tools/call echo {text} answers the text
// unchanged; subscriptions/listen {toolsListChanged} is acknowledged; calling
// TOOL makes notifications/tools/list_changed arrive on the listen stream;
// close. One JSON object per step on stdout, the last one the verdict; exit 0
// only when every step passed.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
const dd = argv.indexOf('--');
const flags = dd >= 0 ? argv.slice(0, dd) : argv;
const command = dd >= 0 ? argv.slice(dd + 1) : [];
const opt = (name, dflt) => {
  const i = flags.indexOf(name);
  return i >= 0 && i + 1 < flags.length ? flags[i + 1] : dflt;
};
const url = opt('--url', '');
const version = opt('--version', '2026-07-28');
const text = opt('--text', 'mcpwire interop \u2713 h\u00e9llo');
const trigger = opt('--trigger', 'test_trigger_tool_change');
const waitMs = Number(opt('--wait', '5000'));
if (!url === (command.length === 0)) {
  console.error('usage: interop-ts-client.mjs [flags] (--url URL | -- SERVER_COMMAND ARGS...)');
  process.exit(2);
}
const transportName = url ? 'http' : 'stdio';
const t0 = Date.now();

function emit(step, ok, fields = {}) {
  console.log(JSON.stringify({ client: 'ts-sdk-v2', transport: transportName, step, ok, ms: Date.now() - t0, ...fields }));
}
function fail(step, err) {
  emit(step, false, { error: String(err?.message ?? err) });
  emit('verdict', false, { failedStep: step });
  process.exit(1);
}
function within(promise, step, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${waitMs} ms`)), waitMs);
  });
  return Promise.race([promise, timeout])
    .catch((e) => fail(step, e))
    .finally(() => clearTimeout(timer));
}
// Whatever goes wrong outside a step still ends in a verdict line.
process.on('unhandledRejection', (e) => fail('unhandled', e));

const client = new Client(
  { name: 'mcpwire-interop-ts', version: '0.1.0' },
  { capabilities: {}, versionNegotiation: { mode: { pin: version } } }
);
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'inherit' });

try {
  await client.connect(transport);
} catch (e) {
  fail('connect', e);
}
const negotiated = client.getNegotiatedProtocolVersion();
emit('connect', true, { negotiated, era: client.getProtocolEra(), server: client.getServerVersion() });
if (negotiated !== version) fail('version', `negotiated ${negotiated}, pinned ${version}`);

let names = [];
try {
  names = (await client.listTools()).tools.map((t) => t.name);
} catch (e) {
  fail('tools/list', e);
}
for (const want of ['echo', trigger]) {
  if (!names.includes(want)) fail('tools/list', `tool ${want} not listed (got ${names.join(',')})`);
}
emit('tools/list', true, { count: names.length });

let echo;
try {
  echo = await client.callTool({ name: 'echo', arguments: { text } });
} catch (e) {
  fail('tools/call echo', e);
}
const texts = (echo.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
if (echo.isError) fail('tools/call echo', `isError result: ${JSON.stringify(texts)}`);
if (texts.length !== 1 || texts[0] !== text) fail('tools/call echo', `got text content ${JSON.stringify(texts)}, want [${JSON.stringify(text)}]`);
emit('tools/call echo', true, { text: texts[0] });

let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler('notifications/tools/list_changed', () => changed());
// listen() resolves when notifications/subscriptions/acknowledged arrives.
const sub = await within(client.listen({ toolsListChanged: true }), 'subscriptions/listen', 'notifications/subscriptions/acknowledged');
emit('subscriptions/listen', true, { acknowledged: sub.honoredFilter });

let trig;
try {
  trig = await client.callTool({ name: trigger, arguments: {} });
} catch (e) {
  fail(`tools/call ${trigger}`, e);
}
if (trig.isError) fail(`tools/call ${trigger}`, 'isError result');
emit(`tools/call ${trigger}`, true);
await within(listChanged, 'notifications/tools/list_changed', 'notifications/tools/list_changed on the listen stream');
emit('notifications/tools/list_changed', true);

try {
  await sub.close();
  await client.close();
} catch (e) {
  fail('close', e);
}
emit('close', true);
emit('verdict', true);
process.exit(0);
