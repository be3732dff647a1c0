#!/usr/bin/env bash
# .ci/conformance-client.sh — `make conformance-client`: the client leg of the
# official MCP conformance suite (@modelcontextprotocol/conformance
# 0.2.0-alpha.12 under Node 22.23.5, pinned in interop/npm/ and installed by
# .ci/tools.sh into $MCP_TOOLS_HOME, default /tmp/mcpwire-tools) against our
# client, client/, driven by the hidden `bin/mcpwire conformance-client`.
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
# Scenarios: every 2026-07-28 client requirement (requirements/2026-07-28.yaml),
# auth/* included: those drive the OAuth 2.1 flow of client/oauth
# (protected-resource and authorization-server metadata discovery, client
# registration: pre-registered, CIMD or dynamic; PKCE authorization code with
# the mock's redirect followed headlessly, resource indicators, iss checks,
# scope selection and step-up). Then the extension scenarios we pass
# (not_scored there: "extension"), run with --force since the suite does not
# place extensions on the spec timeline: client credentials with
# client_secret_basic and private_key_jwt, enterprise-managed authorization
# (ID-JAG token exchange + JWT bearer grant), workload identity (JWT bearer),
# DPoP-bound tokens with and without server nonces. That is every client
# scenario of the suite's 2026-07-28 set and its auth extensions.
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
  auth/metadata-default
  auth/metadata-var1
  auth/metadata-var2
  auth/metadata-var3
  auth/basic-cimd
  auth/scope-from-www-authenticate
  auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined
  auth/scope-step-up
  auth/scope-retry-limit
  auth/token-endpoint-auth-basic
  auth/token-endpoint-auth-post
  auth/token-endpoint-auth-none
  auth/pre-registration
  auth/resource-mismatch
  auth/offline-access-scope
  auth/offline-access-not-supported
  auth/authorization-server-migration
  auth/iss-supported
  auth/iss-not-advertised
  auth/iss-supported-missing
  auth/iss-wrong-issuer
  auth/iss-unexpected
  auth/iss-normalized
  auth/metadata-issuer-mismatch
)
# Extension scenarios (not on the spec timeline: run with --force).
EXTENSIONS=(
  auth/client-credentials-basic
  auth/client-credentials-jwt
  auth/enterprise-managed-authorization
  auth/wif-jwt-bearer
  auth/dpop
  auth/dpop-nonce
)
# SCENARIOS_ONLY="a b" runs those instead (ad-hoc runs).
if [ -n "${SCENARIOS_ONLY:-}" ]; then
  read -ra SCENARIOS <<<"$SCENARIOS_ONLY"
  EXTENSIONS=()
fi
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
for s in "${SCENARIOS[@]}" "${EXTENSIONS[@]}"; do
  log="$OUT/${s//\//_}.log"
  t0=$SECONDS
  force=()
  for e in "${EXTENSIONS[@]}"; do [ "$e" = "$s" ] && force=(--force); done
  # Single-scenario runs colour their output whatever NO_COLOR says.
  NO_COLOR=1 FORCE_COLOR=0 timeout 120 "$NODE" "$SUITE/dist/index.js" client \
    --command "$ROOT/bin/mcpwire conformance-client" --scenario "$s" --spec-version "$REV" "${force[@]}" \
    -o "$OUT/results/${s//\//_}" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$log"
  rc=${PIPESTATUS[0]}
  sum=$(summary "$OUT/results/${s//\//_}")
  # A scenario the suite skipped wrote no checks: not a pass.
  [ "$sum" = "no checks.json" ] && rc=1
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
echo "conformance-client $REV: $PASS/$((${#SCENARIOS[@]} + ${#EXTENSIONS[@]})) scenarios passed, ${#EXTENSIONS[@]} of them extensions ($((SECONDS - start))s)"
if [ $FAIL -eq 0 ] && [ $KEEP -eq 0 ]; then rm -rf "$OUT"; fi
[ $FAIL -eq 0 ]
