#!/usr/bin/env bash
# .ci/conformance-client.sh — `make conformance-client`: the client leg of the
# official MCP conformance suite (@modelcontextprotocol/conformance
# 0.2.0-alpha.12 under Node 22.23.5, pinned in interop/npm/ and installed by
# .ci/tools.sh into $MCP_TOOLS_HOME, default /tmp/mcpwire-tools) against our
# client, engine/client, driven by the hidden `bin/mcpwire conformance-client`.
#
#   .ci/conformance-client.sh [--out DIR] [--keep]
#   SCENARIOS_ONLY="tools_call request-metadata" .ci/conformance-client.sh   (a subset)
#
# Each scenario runs on its own: the suite starts its mock server, runs
#   bin/mcpwire conformance-client URL
# with MCP_CONFORMANCE_SCENARIO / _PROTOCOL_VERSION / _CONTEXT set, and
# judges what reached the mock. A scenario passes when the suite exits 0:
# no FAILURE and no WARNING check, and our client exited 0 (the suite's own
# rule). Prints one line per scenario, then
#   conformance-client 2026-07-28: N/N scenarios passed
# and exits 1 if any failed.
#
# Scenarios: the 2026-07-28 client requirements (requirements/2026-07-28.yaml)
# except auth/*: those drive OAuth 2.1 flows (protected-resource and
# authorization-server metadata discovery, client registration, PKCE
# authorization code, token refresh, scope step-up) that engine/client does
# not implement; it only sends static headers (streamhttp.DialOptions.Header).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib-server.sh
. "$ROOT/.ci/lib-server.sh"

parse_log_args conformance-client.sh "$@"
REV=2026-07-28
SCENARIOS=(
  request-metadata
  http-standard-headers
  http-custom-headers
  http-invalid-tool-headers
  tools_call
  sep-2322-client-request-state
  json-schema-ref-no-deref
)
# SCENARIOS_ONLY="a b" runs those instead (ad-hoc runs).
[ -n "${SCENARIOS_ONLY:-}" ] && read -ra SCENARIOS <<<"$SCENARIOS_ONLY"
TOOLS=$("$ROOT/.ci/tools.sh" node22 suite) || { echo "conformance-client: installing the pinned suite failed" >&2; exit 1; }
NODE="$TOOLS/bin/node22"
SUITE="$TOOLS/suite/node_modules/@modelcontextprotocol/conformance"

go build -o bin/mcpwire ./cmd/mcpwire || exit 1
OUT=${OUT:-$(mktemp -d /tmp/mcpwire-conformance-client.XXXXXX)}
mkdir -p "$OUT"
rm -rf "$OUT/results"

# summary DIR: "S passed, F failed, W warnings" and the failing checks, from
# the scenario's checks.json (the newest one under DIR).
summary() {
  "$NODE" -e '
    const fs = require("fs"), path = require("path");
    const files = [];
    const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p); else if (e.name === "checks.json") files.push(p);
    } };
    try { walk(process.argv[1]); } catch { }
    if (files.length === 0) { console.log("no checks.json"); process.exit(0); }
    files.sort();
    const checks = JSON.parse(fs.readFileSync(files[files.length - 1], "utf8"));
    const n = (s) => checks.filter((c) => c.status === s).length;
    console.log(`${n("SUCCESS")} passed, ${n("FAILURE")} failed, ${n("WARNING")} warnings, ${n("SKIPPED")} skipped`);
    for (const c of checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING").slice(0, 8))
      console.log(`       ${c.status.toLowerCase()}: ${c.id} ${c.name}: ${(c.errorMessage || c.description || "").split("\n")[0].slice(0, 200)}`);
  ' "$1"
}

echo "conformance-client $REV: suite 0.2.0-alpha.12 against bin/mcpwire conformance-client; logs in $OUT$([ $KEEP -eq 0 ] && echo ' (kept on failure)')"
PASS=0 FAIL=0
start=$SECONDS
for s in "${SCENARIOS[@]}"; do
  log="$OUT/${s//\//_}.log"
  t0=$SECONDS
  # Single-scenario runs colour their output whatever NO_COLOR says.
  NO_COLOR=1 FORCE_COLOR=0 timeout 120 "$NODE" "$SUITE/dist/index.js" client \
    --command "$ROOT/bin/mcpwire conformance-client" --scenario "$s" --spec-version "$REV" \
    -o "$OUT/results/${s//\//_}" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log"
  rc=${PIPESTATUS[0]}
  sum=$(summary "$OUT/results/${s//\//_}")
  if [ "$rc" -eq 0 ]; then
    PASS=$((PASS + 1))
    printf 'ok   %-32s %s (%ds)\n' "$s" "$(head -1 <<<"$sum")" $((SECONDS - t0))
  else
    FAIL=$((FAIL + 1))
    printf 'FAIL %-32s %s (suite exit %d) log: %s\n' "$s" "$(head -1 <<<"$sum")" "$rc" "$log"
    tail -n +2 <<<"$sum"
    grep -m 3 -E 'Client exited with code|timed out|^mcpwire: ' "$log" | sed 's/^/       /'
  fi
done
echo "conformance-client $REV: $PASS/${#SCENARIOS[@]} scenarios passed ($((SECONDS - start))s; auth/* not run: no OAuth in engine/client)"
if [ $FAIL -eq 0 ] && [ $KEEP -eq 0 ]; then rm -rf "$OUT"; fi
[ $FAIL -eq 0 ]
