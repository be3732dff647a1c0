// mcptap.mjs — record what an MCP client and server say to each other, and
// check the record against the 2026-07-28 wire rules. No dependencies.
//
//   node mcptap.mjs http  --target http://127.0.0.1:PORT/mcp --log LOG --port-file FILE
//       A recording reverse proxy on a free loopback port (written to FILE once
//       it listens). Point the client at the same URL with the proxy's port.
//       Stops on SIGTERM/SIGINT. Refuses non-loopback targets.
//   node mcptap.mjs stdio --log LOG -- SERVER_COMMAND ARGS...
//       Give the client this command line instead of the server's: it runs the
//       server and relays stdin/stdout line by line, unchanged.
//   node mcptap.mjs check LOG [--version 2026-07-28] [--trigger TOOL]
//       Checks a log written by either mode; prints the findings and one
//       summary line; exit 1 on any failure.
//   node mcptap.mjs check LOG --legacy [--version 2025-11-25] [--trigger TOOL]
//                             [--touch-uri URI] [--delete] [--server-requests M1,M2]
//       The same for a 2025-11-25 conversation (sessions, GET stream); see
//       checkLegacy at the end of this file for what it requires.
//
// The log has one JSON object per line. Client messages: {from:"client",
// method, id, name, meta, caps} plus, over HTTP, the HTTP method and the MCP
// headers of the POST that carried them; server messages {from:"server",
// method, id, error} are tagged, over HTTP, with the POST whose response
// stream carried them (req).
//
// What check requires:
//   HTTP only: every request is a POST; no Mcp-Session-Id, neither sent nor
//     issued; MCP-Protocol-Version = --version and Mcp-Method = the body's
//     method on every request; Mcp-Name = params.name on tools/call and
//     prompts/get; every request answered 2xx.
//   Both: no initialize handshake; every JSON-RPC request carries
//     _meta io.modelcontextprotocol/protocolVersion = --version and
//     _meta io.modelcontextprotocol/clientCapabilities; no error responses;
//     the interop script ran: tools/call echo, a subscriptions/listen whose
//     stream carried notifications/subscriptions/acknowledged first and then
//     notifications/tools/list_changed, after the client called --trigger.
//   A notification missing a header or _meta is a warning (the clients
//   differ there, e.g. on notifications/cancelled); a notification the
//   server refused (HTTP 4xx/5xx) is a failure.

import http from 'node:http';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import readline from 'node:readline';

const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const [mode, ...rest] = process.argv.slice(2);
const flag = (args, name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};

// One summary per JSON-RPC message; `raw` is a parsed message or a string.
function summarize(raw) {
  let m = raw;
  if (typeof raw === 'string') {
    try {
      m = JSON.parse(raw);
    } catch {
      return [{ unparsed: raw.slice(0, 200) }];
    }
  }
  const one = (x) => {
    const meta = x?.params?._meta;
    return {
      method: x?.method,
      id: x?.id,
      name: typeof x?.params?.name === 'string' ? x.params.name : undefined,
      uri: typeof x?.params?.uri === 'string' ? x.params.uri : undefined,
      protocolVersion: typeof x?.result?.protocolVersion === 'string' ? x.result.protocolVersion : undefined,
      meta: meta === undefined ? undefined : meta?.[PV] ?? null,
      caps: meta === undefined ? undefined : meta?.[CC] !== undefined,
      subscriptionId: meta?.['io.modelcontextprotocol/subscriptionId'],
      result: x?.method === undefined && x?.result !== undefined ? true : undefined,
      error: x?.error ? { code: x.error.code, message: String(x.error.message).slice(0, 200) } : undefined
    };
  };
  return Array.isArray(m) ? m.map(one) : [one(m)];
}

function openLog(file) {
  const out = fs.createWriteStream(file, { flags: 'a' });
  return { write: (o) => out.write(JSON.stringify(o) + '\n'), end: (cb) => out.end(cb) };
}

if (mode === 'http') {
  const target = new URL(flag(rest, '--target', ''));
  const log = openLog(flag(rest, '--log', '/dev/stderr'));
  const portFile = flag(rest, '--port-file', '');
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname)) {
    console.error(`mcptap: refusing non-loopback target ${target.hostname}`);
    process.exit(2);
  }
  const HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id', 'last-event-id'];
  let seq = 0;
  const server = http.createServer((req, res) => {
    const n = ++seq;
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = {};
      for (const h of HEADERS) if (req.headers[h] !== undefined) headers[h] = req.headers[h];
      const msgs = body.length ? summarize(body.toString('utf8')) : [];
      log.write({ from: 'client', req: n, http: req.method, path: req.url, headers, msgs });
      const up = http.request(
        {
          hostname: target.hostname.replace(/^\[|\]$/g, ''),
          port: target.port || 80,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host }
        },
        (ures) => {
          const ctype = String(ures.headers['content-type'] ?? '');
          log.write({ from: 'server', req: n, status: ures.statusCode, ctype, session: ures.headers['mcp-session-id'] });
          res.writeHead(ures.statusCode ?? 502, ures.headers);
          res.flushHeaders(); // a stream's headers go on at once, as the server sent them
          // Parse the response as it passes: SSE events one by one (a listen
          // stream never ends on its own), a JSON body at its end.
          let buf = '';
          const sse = ctype.startsWith('text/event-stream');
          ures.on('data', (c) => {
            res.write(c);
            buf += c.toString('utf8');
            if (!sse) return;
            let cut;
            while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
              const event = buf.slice(0, cut);
              buf = buf.slice(cut).replace(/^\r?\n\r?\n/, '');
              const data = event
                .split(/\r?\n/)
                .filter((l) => l.startsWith('data:'))
                .map((l) => l.slice(5).replace(/^ /, ''))
                .join('\n');
              if (data) log.write({ from: 'server', req: n, msgs: summarize(data) });
            }
          });
          ures.on('end', () => {
            if (!sse && buf.trim()) log.write({ from: 'server', req: n, msgs: summarize(buf) });
            log.write({ from: 'server', req: n, end: true });
            res.end();
          });
        }
      );
      up.on('error', (e) => {
        log.write({ from: 'proxy', req: n, error: String(e) });
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      // The client hung up (e.g. closed a listen stream): hang up upstream too.
      res.on('close', () => {
        if (!res.writableFinished) {
          log.write({ from: 'client', req: n, hangup: true });
          up.destroy();
        }
      });
      up.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    if (portFile) fs.writeFileSync(portFile, String(server.address().port));
  });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    log.end(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else if (mode === 'stdio') {
  const dd = rest.indexOf('--');
  if (dd < 0 || dd + 1 >= rest.length) {
    console.error('usage: mcptap.mjs stdio --log LOG -- SERVER_COMMAND ARGS...');
    process.exit(2);
  }
  const log = openLog(flag(rest.slice(0, dd), '--log', '/dev/stderr'));
  const child = spawn(rest[dd + 1], rest.slice(dd + 2), { stdio: ['pipe', 'pipe', 'inherit'] });
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    log.write({ from: 'client', msgs: summarize(line) });
    child.stdin.write(line + '\n');
  });
  process.stdin.on('end', () => child.stdin.end());
  child.stdin.on('error', () => {}); // the server went away first; its exit is logged below
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    log.write({ from: 'server', msgs: summarize(line) });
    process.stdout.write(line + '\n');
  });
  child.on('exit', (code, signal) => {
    log.write({ from: 'server', exit: code, signal });
    log.end(() => process.exit(code ?? 1));
  });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
} else if (mode === 'check') {
  const file = rest[0];
  const want = flag(rest, '--version', '2026-07-28');
  const trigger = flag(rest, '--trigger', 'test_trigger_tool_change');
  if (!file) {
    console.error('usage: mcptap.mjs check LOG [--version V] [--trigger TOOL]');
    process.exit(2);
  }
  const entries = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const isHTTP = entries.some((e) => e.http !== undefined);
  if (rest.includes('--legacy')) {
    process.exit(checkLegacy(entries, isHTTP, {
      want: flag(rest, '--version', '2025-11-25'),
      trigger: flag(rest, '--trigger', ''),
      touchURI: flag(rest, '--touch-uri', ''),
      deleted: rest.includes('--delete'),
      serverRequests: flag(rest, '--server-requests', '').split(',').filter(Boolean)
    }));
  }
  const fails = [];
  const warns = [];
  const reqOf = new Map(); // HTTP request number -> its client entry
  const listenIds = new Set(); // JSON-RPC ids of subscriptions/listen requests
  const listenReqs = new Set(); // HTTP request numbers carrying one
  let requests = 0;
  let notes = 0;
  let echoCalled = false;
  let triggerAt = -1;
  let ackAt = -1;
  let changedAt = -1;
  let firstOnListen = null;
  entries.forEach((e, at) => {
    if (e.from === 'client' && e.msgs) {
      const h = e.headers ?? {};
      const where = isHTTP ? `#${e.req} ${e.http}` : 'stdio';
      if (isHTTP) {
        reqOf.set(e.req, e);
        if (e.http !== 'POST') fails.push(`${where}: HTTP ${e.http} (2026-07-28 is POST-only)`);
        if (h['mcp-session-id'] !== undefined) fails.push(`${where}: sent Mcp-Session-Id`);
      }
      for (const m of e.msgs) {
        if (m.unparsed !== undefined) {
          fails.push(`${where}: unparsable body ${JSON.stringify(m.unparsed)}`);
          continue;
        }
        if (m.method === undefined) continue; // a response to a server request
        const isNote = m.id === undefined;
        isNote ? notes++ : requests++;
        const bucket = isNote ? warns : fails;
        const what = `${where} ${m.method}${m.name ? ` ${m.name}` : ''}`;
        if (m.method === 'initialize' || m.method === 'notifications/initialized') fails.push(`${what}: legacy handshake`);
        if (isHTTP) {
          if (h['mcp-protocol-version'] !== want) bucket.push(`${what}: MCP-Protocol-Version ${JSON.stringify(h['mcp-protocol-version'])}`);
          if (h['mcp-method'] !== m.method) bucket.push(`${what}: Mcp-Method ${JSON.stringify(h['mcp-method'])}`);
          if ((m.method === 'tools/call' || m.method === 'prompts/get') && h['mcp-name'] !== m.name) {
            fails.push(`${what}: Mcp-Name ${JSON.stringify(h['mcp-name'])}`);
          }
        }
        if (m.meta !== want) bucket.push(`${what}: _meta protocolVersion ${JSON.stringify(m.meta)}`);
        if (!isNote && !m.caps) fails.push(`${what}: _meta clientCapabilities missing`);
        if (m.method === 'tools/call' && m.name === 'echo') echoCalled = true;
        if (m.method === 'tools/call' && m.name === trigger && triggerAt < 0) triggerAt = at;
        if (m.method === 'subscriptions/listen') {
          listenIds.add(JSON.stringify(m.id));
          if (isHTTP) listenReqs.add(e.req);
        }
      }
    } else if (e.from === 'server') {
      const c = isHTTP ? reqOf.get(e.req) : undefined;
      const what = (c?.msgs ?? []).map((m) => m.method ?? 'response').join(',') || `HTTP ${c?.http}`;
      const where = isHTTP ? `#${e.req} reply to ${what}` : 'stdio reply';
      if (e.session !== undefined) fails.push(`${where}: server issued Mcp-Session-Id`);
      if (e.status !== undefined && (e.status < 200 || e.status > 299)) fails.push(`${where}: HTTP ${e.status}`);
      for (const m of e.msgs ?? []) {
        if (m.error) fails.push(`${where}: error ${m.error.code} ${m.error.message}`);
        const onListen = isHTTP
          ? listenReqs.has(e.req)
          : m.subscriptionId !== undefined; // stdio: a notification tagged with a subscription
        if (onListen && firstOnListen === null) firstOnListen = m.method ?? 'response';
        if (m.method === 'notifications/subscriptions/acknowledged' && (onListen || !isHTTP) && ackAt < 0) ackAt = at;
        if (m.method === 'notifications/tools/list_changed' && (onListen || !isHTTP) && changedAt < 0) changedAt = at;
      }
    } else if (e.from === 'proxy') {
      fails.push(`#${e.req}: proxy error ${e.error}`);
    }
  });
  if (requests === 0) fails.push('no client requests recorded');
  if (!echoCalled) fails.push('no tools/call echo recorded');
  if (listenIds.size === 0) fails.push('no subscriptions/listen recorded');
  else if (firstOnListen !== 'notifications/subscriptions/acknowledged') {
    fails.push(`first message on the listen stream: ${firstOnListen ?? 'none'} (want notifications/subscriptions/acknowledged)`);
  }
  if (ackAt < 0) fails.push('no notifications/subscriptions/acknowledged recorded');
  if (triggerAt < 0) fails.push(`no tools/call ${trigger} recorded`);
  if (changedAt < 0) fails.push('no notifications/tools/list_changed on the listen stream');
  else if (changedAt < triggerAt) fails.push(`notifications/tools/list_changed before tools/call ${trigger}`);
  for (const w of warns) console.log(`warn ${w}`);
  for (const f of fails) console.log(`FAIL ${f}`);
  console.log(
    `wire ${isHTTP ? 'http' : 'stdio'}: ${requests} requests, ${notes} notifications; ${fails.length} problems, ${warns.length} warnings`
  );
  process.exit(fails.length ? 1 : 0);
} else {
  console.error('usage: mcptap.mjs http|stdio|check ...');
  process.exit(2);
}

// checkLegacy checks a record of a 2025-11-25 conversation (make
// interop-legacy); returns the exit code.
//
//   Both: the first client message is initialize, answered with a result
//     whose protocolVersion is opts.want, and notifications/initialized
//     follows; no error responses (but see DELETE); with opts.trigger, a
//     tools/call of it and notifications/tools/list_changed after it; with
//     opts.touchURI, resources/subscribe of it and
//     notifications/resources/updated for it; for each method in
//     opts.serverRequests, a request of it from the server (over HTTP on a
//     POST's reply, never the GET stream) and the client's result for it.
//   HTTP: initialize carries no Mcp-Session-Id and its reply issues one
//     (visible ASCII); every later request carries that id and
//     MCP-Protocol-Version opts.want; every reply 2xx; a GET is answered 200
//     text/event-stream and the notifications above arrive on a GET stream
//     (the server's own stream, not a POST's reply); with opts.deleted, a
//     DELETE with the id is answered 2xx, the server then ends the
//     session's GET streams, and a later request with the id is answered
//     404 (only those may fail).
//   stdio: the server exits with status 0 once the client is done.
function checkLegacy(entries, isHTTP, opts) {
  const { want, trigger, touchURI, deleted, serverRequests = [] } = opts;
  const asked = new Map(); // JSON-RPC id of a server→client request -> {method, answered}
  const fails = [];
  const reqOf = new Map();
  let session; // issued by the initialize reply
  let initReq = -1; // HTTP request number (or log index on stdio) of initialize
  let initID;
  let first = true;
  let initResult;
  let initialized = false;
  let requests = 0;
  let notes = 0;
  let triggerAt = -1;
  let changedAt = -1;
  let subscribed = false;
  let updatedAt = -1;
  let touchAt = -1;
  let gets = 0;
  let deleteOK = -1; // req number of a DELETE answered 2xx
  let goneAfterDelete = false;
  let exit;
  const answered = new Set(); // HTTP request numbers whose status arrived
  const getEnded = new Map(); // GET request number -> 'server' | 'client' (who ended it first)
  const afterDelete = (n) => deleteOK >= 0 && n > deleteOK;
  entries.forEach((e, at) => {
    if (e.from === 'client' && e.msgs) {
      const h = e.headers ?? {};
      const where = isHTTP ? `#${e.req} ${e.http}` : 'stdio';
      if (isHTTP) reqOf.set(e.req, e);
      const isInit = e.msgs.some((m) => m.method === 'initialize');
      if (first) {
        first = false;
        if (!isInit) fails.push(`${where}: the first client message is ${e.msgs.map((m) => m.method ?? 'response').join(',')}, want initialize`);
      }
      if (isHTTP && isInit) {
        if (h['mcp-session-id'] !== undefined) fails.push(`${where} initialize: sent Mcp-Session-Id`);
      } else if (isHTTP && initReq >= 0) {
        if (h['mcp-session-id'] !== session) fails.push(`${where}: Mcp-Session-Id ${JSON.stringify(h['mcp-session-id'])}, want the issued ${JSON.stringify(session)}`);
        if (h['mcp-protocol-version'] !== want) fails.push(`${where}: MCP-Protocol-Version ${JSON.stringify(h['mcp-protocol-version'])}`);
      }
      if (isHTTP && e.http === 'GET') gets++;
      for (const m of e.msgs) {
        if (m.unparsed !== undefined) {
          fails.push(`${where}: unparsable body ${JSON.stringify(m.unparsed)}`);
          continue;
        }
        if (m.method === undefined) {
          // The client's answer to a server→client request.
          const q = asked.get(JSON.stringify(m.id));
          if (q && m.result) q.answered = true;
          continue;
        }
        m.id === undefined ? notes++ : requests++;
        if (m.method === 'initialize') {
          if (initReq >= 0) fails.push(`${where}: a second initialize`);
          initReq = isHTTP ? e.req : at;
          initID = JSON.stringify(m.id);
        }
        if (m.method === 'notifications/initialized') initialized = true;
        if (m.method === 'tools/call' && trigger && m.name === trigger && triggerAt < 0) triggerAt = at;
        if (m.method === 'resources/subscribe' && m.uri === touchURI) subscribed = true;
        if (m.method === 'tools/call' && touchURI && subscribed && touchAt < 0 && m.name !== trigger) touchAt = at;
      }
    } else if (e.from === 'client' && e.hangup) {
      if (reqOf.get(e.req)?.http === 'GET' && !getEnded.has(e.req)) getEnded.set(e.req, 'client');
    } else if (e.from === 'server' && e.exit !== undefined) {
      exit = e;
    } else if (e.from === 'server' && e.end) {
      if (reqOf.get(e.req)?.http === 'GET' && !getEnded.has(e.req)) getEnded.set(e.req, at);
    } else if (e.from === 'server') {
      const c = isHTTP ? reqOf.get(e.req) : undefined;
      const what = (c?.msgs ?? []).map((m) => m.method ?? 'response').join(',') || `HTTP ${c?.http}`;
      const where = isHTTP ? `#${e.req} reply to ${what}` : 'stdio reply';
      const late = isHTTP && afterDelete(e.req);
      if (e.status !== undefined) {
        const ok = e.status >= 200 && e.status <= 299;
        if (isHTTP && e.req === initReq) {
          session = e.session;
          if (!/^[\x21-\x7e]+$/.test(session ?? '')) fails.push(`${where}: no usable Mcp-Session-Id issued (${JSON.stringify(session)})`);
        }
        if (c?.http === 'GET' && (e.status !== 200 || !e.ctype.startsWith('text/event-stream'))) {
          fails.push(`${where}: GET answered ${e.status} ${e.ctype}, want 200 text/event-stream`);
        } else if (c?.http === 'DELETE' && c.headers?.['mcp-session-id'] === session && ok && deleteOK < 0) {
          deleteOK = e.req;
        } else if (late && e.status === 404 && c?.headers?.['mcp-session-id'] === session) {
          goneAfterDelete = true;
        } else if (!ok) {
          fails.push(`${where}: HTTP ${e.status}`);
        }
      }
      const onGET = c?.http === 'GET';
      for (const m of e.msgs ?? []) {
        if (m.error && !late) fails.push(`${where}: error ${m.error.code} ${m.error.message}`);
        if (m.method === undefined && JSON.stringify(m.id) === initID) initResult = m.protocolVersion ?? null;
        if (m.method !== undefined && m.id !== undefined && !asked.has(JSON.stringify(m.id))) {
          if (isHTTP && onGET && m.method !== 'ping') fails.push(`${where}: server request ${m.method} on the GET stream (it belongs on the reply of the request that needs it)`);
          asked.set(JSON.stringify(m.id), { method: m.method, answered: false });
        }
        if (m.method === 'notifications/tools/list_changed' && triggerAt >= 0 && changedAt < 0 && (onGET || !isHTTP)) changedAt = at;
        if (m.method === 'notifications/resources/updated' && m.uri === touchURI && touchAt >= 0 && updatedAt < 0 && (onGET || !isHTTP)) updatedAt = at;
      }
    } else if (e.from === 'proxy') {
      const c = reqOf.get(e.req);
      if (c?.http === 'GET' && !answered.has(e.req)) {
        fails.push(`#${e.req} GET: no status or headers before the client hung up (the server held the stream's headers back)`);
      } else {
        fails.push(`#${e.req}: proxy error ${e.error}`);
      }
    }
    if (e.from === 'server' && e.status !== undefined) answered.add(e.req);
  });
  const stream = isHTTP ? ' on the GET stream' : '';
  if (initReq < 0) fails.push('no initialize recorded');
  else if (initResult !== want) fails.push(`initialize answered protocolVersion ${JSON.stringify(initResult)}, want ${want}`);
  if (!initialized) fails.push('no notifications/initialized recorded');
  if (trigger && triggerAt < 0) fails.push(`no tools/call ${trigger} recorded`);
  else if (trigger && changedAt < 0) fails.push(`no notifications/tools/list_changed${stream} after tools/call ${trigger}`);
  if (touchURI && !subscribed) fails.push(`no resources/subscribe ${touchURI} recorded`);
  else if (touchURI && touchAt < 0) fails.push('no tools/call after resources/subscribe recorded');
  else if (touchURI && updatedAt < 0) fails.push(`no notifications/resources/updated ${touchURI}${stream} after the tools/call`);
  if (isHTTP && (trigger || touchURI) && gets === 0) fails.push('no GET stream opened');
  for (const method of serverRequests) {
    const qs = [...asked.values()].filter((q) => q.method === method);
    if (qs.length === 0) fails.push(`no ${method} request from the server recorded`);
    else if (!qs.some((q) => q.answered)) fails.push(`no answer to the server's ${method} recorded`);
  }
  if (isHTTP && deleted && deleteOK < 0) fails.push('no DELETE with the session id answered 2xx');
  else if (isHTTP && deleted && !goneAfterDelete) fails.push('no request with the ended session id answered 404 after DELETE');
  if (isHTTP && deleted && deleteOK >= 0) {
    // Ending the session ends its GET streams: the server closes them (the
    // client only hangs up later, when it closes).
    for (const [n, by] of getEnded) if (by === 'client') fails.push(`#${n} GET: the server kept the stream of the deleted session open`);
    for (const [n, e] of reqOf) if (e.http === 'GET' && !getEnded.has(n)) fails.push(`#${n} GET: the stream never ended`);
  }
  if (!isHTTP && (exit === undefined || exit.exit !== 0)) {
    fails.push(`the server ${exit ? `exited with ${exit.exit ?? exit.signal}` : 'did not exit'}, want status 0 when its stdin ends`);
  }
  for (const f of fails) console.log(`FAIL ${f}`);
  console.log(
    `wire ${isHTTP ? 'http' : 'stdio'}: ${requests} requests, ${notes} notifications${isHTTP ? `, session ${session ?? '-'}` : ''}; ${fails.length} problems`
  );
  return fails.length ? 1 : 0;
}
