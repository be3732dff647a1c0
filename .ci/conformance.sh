#!/usr/bin/env bash
# .ci/conformance.sh — `make conformance`: the official MCP conformance suite
# (@modelcontextprotocol/conformance 0.2.0-alpha.12, under Node 22.23.5, both
# pinned in interop/npm/ and installed by .ci/tools.sh into $MCP_TOOLS_HOME,
# default /tmp/mcpwire-tools) against `bin/mcpwire serve --http` on a free
# loopback port, with the frozen 2026-07-28 requirement set.
#
#   .ci/conformance.sh [--out DIR] [--keep]
#
# The suite's raw console log goes to a file, never to our output: its
# "Total: N passed, M failed" line counts the checks of unscored extension
# scenarios too. .ci/conformance-summary.mjs prints our verdict instead, from
# the per-scenario checks.json files:
#   conformance 2026-07-28: 37/37 scored scenarios passed; http-header-validation ok; http-custom-header-server-validation ok
# Besides the scored scenarios we require the two unscored (pending) SEP-2243
# header scenarios http-header-validation and http-custom-header-server-validation.
# Exit 1 if any of those fails. The suite has no stdio mode: stdio is covered
# by .ci/interop.sh.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib-server.sh
. "$ROOT/.ci/lib-server.sh"

parse_log_args conformance.sh "$@"
REV=2026-07-28
MUST_PASS=http-header-validation,http-custom-header-server-validation
TOOLS=$("$ROOT/.ci/tools.sh" node22 suite) || { echo "conformance: installing the pinned suite failed" >&2; exit 1; }
NODE="$TOOLS/bin/node22"
SUITE="$TOOLS/suite/node_modules/@modelcontextprotocol/conformance"

go build -o bin/mcpwire ./cmd/mcpwire || exit 1
OUT=${OUT:-$(mktemp -d /tmp/mcpwire-conformance.XXXXXX)}
mkdir -p "$OUT"
rm -rf "$OUT/results"
trap stop_tracked EXIT

start_http_server "$ROOT/bin/mcpwire" "$OUT/server.log" || { echo "conformance: bin/mcpwire serve --http did not start" >&2; exit 1; }
echo "conformance $REV: suite 0.2.0-alpha.12 against bin/mcpwire at $SERVER_URL; logs in $OUT$([ $KEEP -eq 0 ] && echo ' (kept on failure)')"

# The suite exits 0 when every scored scenario passed; single-scenario runs
# colour their output whatever NO_COLOR says, hence the sed.
NO_COLOR=1 FORCE_COLOR=0 timeout 600 "$NODE" "$SUITE/dist/index.js" server \
  --url "$SERVER_URL" --requirements "$REV" -o "$OUT/results" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' >"$OUT/suite.log"
suite_rc=${PIPESTATUS[0]}
stop_tracked

"$NODE" "$ROOT/.ci/conformance-summary.mjs" "$OUT/results" --suite "$SUITE" --requirements "$REV" \
  --must-pass "$MUST_PASS" --suite-exit "$suite_rc"
rc=$?
if [ $rc -ne 0 ]; then
  echo "conformance: failed; the suite's raw log is $OUT/suite.log, per-check results under $OUT/results, server log $OUT/server.log"
elif [ $KEEP -eq 0 ]; then
  rm -rf "$OUT"
fi
exit $rc
