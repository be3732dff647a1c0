// conformance-summary.mjs — turn the results folder of a conformance-suite
// server run into our own verdict, counting SCORED scenarios only.
//
//   node conformance-summary.mjs RESULTS --suite SUITE_PACKAGE_DIR --requirements 2026-07-28 \
//        [--must-pass a,b] [--suite-exit N]
//
// Scored scenarios are the `server:` list of the suite's frozen
// requirements/<rev>.yaml. The suite's own "Total: N passed, M failed" line
// counts the checks of every scenario it ran, unscored extensions included
// (the tasks-* ones fail against a server without those fixtures while the
// suite still exits 0), so it is never shown; this prints instead:
//   - one line per scored scenario (PASS/FAIL, check counts, failing checks);
//   - one line per --must-pass scenario (unscored, but we require it);
//   - one line on the other unscored scenarios (informational);
//   - the verdict, e.g.
//     conformance 2026-07-28: 37/37 scored scenarios passed; http-header-validation ok; ...
// Exit 1 if a scored scenario failed or has no result, if a --must-pass
// scenario failed or did not run, or if the suite itself exited non-zero
// (--suite-exit) although every scenario here looks fine.
//
// Results layout: RESULTS/server-<scenario>-<ISO time>/checks.json, an array
// of {id, status: SUCCESS|FAILURE|WARNING|SKIPPED|INFO, errorMessage?, description}.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const results = args[0];
const suiteDir = opt('--suite', '');
const rev = opt('--requirements', '2026-07-28');
const mustPass = opt('--must-pass', '').split(',').filter(Boolean);
const suiteExit = Number(opt('--suite-exit', '0'));
if (!results || !suiteDir) {
  console.error('usage: conformance-summary.mjs RESULTS --suite SUITE_PACKAGE_DIR [--requirements REV] [--must-pass a,b] [--suite-exit N]');
  process.exit(2);
}

// The requirement file, parsed with the suite's own YAML dependency.
const yaml = createRequire(path.join(suiteDir, 'package.json'))('yaml');
const reqs = yaml.parse(fs.readFileSync(path.join(suiteDir, 'requirements', `${rev}.yaml`), 'utf8'));
const scored = reqs.server ?? [];
const unscoredReason = new Map((reqs.not_scored ?? []).filter((e) => e.leg === 'server').map((e) => [e.scenario, e.reason]));

// scenario -> checks of its newest result folder
const byScenario = new Map();
const dirs = fs.existsSync(results) ? fs.readdirSync(results).sort() : [];
for (const d of dirs) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
  const file = path.join(results, d, 'checks.json');
  if (m && fs.existsSync(file)) byScenario.set(m[1], JSON.parse(fs.readFileSync(file, 'utf8')));
}

function verdict(name) {
  const checks = byScenario.get(name);
  if (!checks) return { ran: false, ok: false, line: 'no result (did not run)' };
  const count = (s) => checks.filter((c) => c.status === s).length;
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const warned = checks.filter((c) => c.status === 'WARNING');
  const counted = checks.length - count('INFO');
  const detail = [
    ...failed.map((c) => `     x ${c.id}: ${String(c.errorMessage ?? c.description).slice(0, 400)}`),
    ...warned.map((c) => `     ! ${c.id}: ${String(c.errorMessage ?? c.description).slice(0, 400)}`)
  ];
  return {
    ran: true,
    ok: failed.length === 0,
    line: `${counted - failed.length}/${counted} checks ok${count('SKIPPED') ? `, ${count('SKIPPED')} skipped` : ''}${warned.length ? `, ${warned.length} warnings` : ''}`,
    detail
  };
}

let scoredOk = 0;
const problems = [];
for (const s of scored) {
  const v = verdict(s);
  console.log(`${v.ok ? 'PASS' : 'FAIL'} ${s} (${v.line})`);
  for (const l of v.detail ?? []) console.log(l);
  if (v.ok) scoredOk++;
  else problems.push(s);
}
const mustParts = [];
for (const s of mustPass) {
  const v = verdict(s);
  console.log(`${v.ok ? 'PASS' : 'FAIL'} ${s} (not scored by the suite; required here) (${v.line})`);
  for (const l of v.detail ?? []) console.log(l);
  mustParts.push(`${s} ${v.ok ? 'ok' : v.ran ? 'FAILED' : 'did not run'}`);
  if (!v.ok) problems.push(s);
}
const others = [...byScenario.keys()].filter((s) => !scored.includes(s) && !mustPass.includes(s)).sort();
if (others.length) {
  const part = (s) => `${s}${unscoredReason.has(s) ? ` [${unscoredReason.get(s)}]` : ''} ${verdict(s).ok ? 'ok' : 'fails'}`;
  console.log(`not scored, informational only: ${others.map(part).join('; ')}`);
}
if (suiteExit !== 0 && problems.length === 0) {
  problems.push('suite-exit');
  console.log(`FAIL the suite exited ${suiteExit} although every scenario above passed (see its raw log)`);
}
console.log(`conformance ${rev}: ${[`${scoredOk}/${scored.length} scored scenarios passed`, ...mustParts].join('; ')}`);
process.exit(problems.length ? 1 : 0);
