#!/usr/bin/env bash
# .ci/conformance-legacy.sh — `make conformance-legacy`: the official MCP
# conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12, under
# Node 22.23.5, both pinned in interop/npm/ and installed by .ci/tools.sh)
# with the frozen 2025-11-25 requirement set, against the legacy endpoint of
# `bin/mcpwire serve --http ADDR --legacy-path /mcp-2025` (transport/legacy):
# initialize and sessions, the GET stream, server→client sampling and
# elicitation, logging/setLevel, resources/subscribe.
#
#   .ci/conformance-legacy.sh [--out DIR] [--keep]
#
# Prints one line per scored scenario and the verdict, e.g.
#   conformance 2025-11-25: 30/30 scored scenarios passed; server-session-lifecycle ok
# Besides the 30 scored scenarios we require the unscored
# server-session-lifecycle (DELETE, then 404). Exit 1 if any fails. The
# 2026-07-28 run against /mcp on the same binary is `make conformance`.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib-server.sh
. "$ROOT/.ci/lib-server.sh"

parse_log_args conformance-legacy.sh "$@"
REV=2025-11-25
LEGACY_PATH=/mcp-2025
MUST_PASS=server-session-lifecycle
TOOLS=$("$ROOT/.ci/tools.sh" node22 suite) || { echo "conformance-legacy: installing the pinned suite failed" >&2; exit 1; }
NODE="$TOOLS/bin/node22"
SUITE="$TOOLS/suite/node_modules/@modelcontextprotocol/conformance"

go build -o bin/mcpwire ./cmd/mcpwire || exit 1
OUT=${OUT:-$(mktemp -d /tmp/mcpwire-conformance-legacy.XXXXXX)}
mkdir -p "$OUT"
rm -rf "$OUT/results"
trap stop_tracked EXIT

SERVE_ARGS="--legacy-path $LEGACY_PATH" start_http_server "$ROOT/bin/mcpwire" "$OUT/server.log" ||
  { echo "conformance-legacy: bin/mcpwire serve --http --legacy-path did not start" >&2; exit 1; }
URL="http://127.0.0.1:$SERVER_PORT$LEGACY_PATH"
echo "conformance $REV: suite 0.2.0-alpha.12 against bin/mcpwire's legacy endpoint $URL; logs in $OUT$([ $KEEP -eq 0 ] && echo ' (kept on failure)')"

NO_COLOR=1 FORCE_COLOR=0 timeout 600 "$NODE" "$SUITE/dist/index.js" server \
  --url "$URL" --requirements "$REV" -o "$OUT/results" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' >"$OUT/suite.log"
suite_rc=${PIPESTATUS[0]}
stop_tracked

"$NODE" "$ROOT/.ci/conformance-summary.mjs" "$OUT/results" --suite "$SUITE" --requirements "$REV" \
  --must-pass "$MUST_PASS" --suite-exit "$suite_rc"
rc=$?
if [ $rc -ne 0 ]; then
  echo "conformance-legacy: failed; the suite's raw log is $OUT/suite.log, per-check results under $OUT/results, server log $OUT/server.log"
elif [ $KEEP -eq 0 ]; then
  rm -rf "$OUT"
fi
exit $rc
