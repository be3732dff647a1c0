#!/usr/bin/env bash
# .ci/interop.sh — `make interop`: real, independently written MCP clients
# against bin/mcpwire, over Streamable HTTP and over stdio, protocol revision
# 2026-07-28 only.
#
#   .ci/interop.sh [--out DIR] [--keep]
#
# Clients (pinned, installed by .ci/tools.sh into $MCP_TOOLS_HOME, default
# /tmp/mcpwire-tools):
#   ts-sdk-v2  @modelcontextprotocol/client 2.4.0, versionNegotiation pinned to 2026-07-28
#              (.ci/interop-ts-client.mjs)
#   go-sdk     github.com/modelcontextprotocol/go-sdk v1.8.0 (interop/goclients/gosdkclient)
#   mcp-go     github.com/mark3labs/mcp-go v1.2.1           (interop/goclients/mcpgoclient)
# Each one connects, runs tools/list, tools/call echo {text}, opens
# subscriptions/listen {toolsListChanged}, calls test_trigger_tool_change and
# must get notifications/tools/list_changed on the listen stream.
#
# Every run goes through .ci/mcptap.mjs (a recording HTTP proxy, or a stdio
# relay in front of `bin/mcpwire serve --stdio`), and the record is checked:
# POST only, no Mcp-Session-Id, MCP-Protocol-Version 2026-07-28 and Mcp-Method
# (and Mcp-Name) on every request, _meta protocolVersion and
# clientCapabilities on every request, no errors, ack first on the listen
# stream, list_changed after the trigger.
#
# Prints one line per client x transport, then "interop: N passed, M failed".
# Exit 1 if any run failed. Logs go to --out (default: a new temp dir,
# removed on success unless --keep).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib-server.sh
. "$ROOT/.ci/lib-server.sh"

parse_log_args interop.sh "$@"
VERSION=2026-07-28
TRIGGER=test_trigger_tool_change
TOOLS=$("$ROOT/.ci/tools.sh" node22 clients goclients) || { echo "interop: installing the pinned clients failed" >&2; exit 1; }
NODE="$TOOLS/bin/node22"
TAP="$ROOT/.ci/mcptap.mjs"
cp "$ROOT/.ci/interop-ts-client.mjs" "$TOOLS/clients/interop-ts-client.mjs"

go build -o bin/mcpwire ./cmd/mcpwire || exit 1
SERVER="$ROOT/bin/mcpwire"
OUT=${OUT:-$(mktemp -d /tmp/mcpwire-interop.XXXXXX)}
mkdir -p "$OUT"
trap stop_tracked EXIT

start_http_server "$SERVER" "$OUT/server-http.log" || { echo "interop: bin/mcpwire serve --http did not start" >&2; exit 1; }

PASS=0 FAIL=0
# report NAME RC: one line per client x transport.
report() {
  local name=$1 rc=$2 out="$OUT/$1.out" check="$OUT/$1.check"
  local client=${name%-*} transport=${name##*-}
  local wire; wire=$(tail -1 "$check" 2>/dev/null | sed 's/^wire [a-z]*: //')
  if [ "$rc" -eq 0 ]; then
    PASS=$((PASS + 1))
    printf 'ok   %-9s %-5s %s\n' "$client" "$transport" "($wire)"
    # warnings: notifications a client sends without a header or _meta
    grep -h '^warn ' "$check" 2>/dev/null | head -3 | sed 's/^warn /       warning: /'
  else
    FAIL=$((FAIL + 1))
    printf 'FAIL %-9s %-5s logs: %s\n' "$client" "$transport" "$OUT/$name.*"
    # the failed step, if the client got that far, and the wire findings
    grep -h '"ok":false' "$out" 2>/dev/null | grep -v '"step":"verdict"' | head -3 | sed 's/^/       client: /'
    grep -h '^FAIL' "$check" 2>/dev/null | head -10 | sed 's/^/       wire:   /'
    [ -s "$out" ] && ! grep -q '"step":"verdict"' "$out" && tail -5 "$out" | sed 's/^/       output: /'
  fi
}

# run_http NAME CLIENT_ARGV... ; @URL@ in the argv is replaced by the tapped URL.
run_http() {
  local name=$1; shift
  local log="$OUT/$name.wire.jsonl" portfile="$OUT/$name.port"
  rm -f "$log" "$portfile"
  "$NODE" "$TAP" http --target "$SERVER_URL" --log "$log" --port-file "$portfile" &
  local tap=$!
  track_pid "$tap"
  for _ in $(seq 100); do [ -s "$portfile" ] && break; sleep 0.05; done
  local url="http://127.0.0.1:$(cat "$portfile" 2>/dev/null)/mcp"
  local argv=() a
  for a in "$@"; do argv+=("${a//@URL@/$url}"); done
  timeout 60 "${argv[@]}" >"$OUT/$name.out" 2>&1
  local rc=$?
  kill "$tap" 2>/dev/null; wait "$tap" 2>/dev/null
  "$NODE" "$TAP" check "$log" --version "$VERSION" --trigger "$TRIGGER" >"$OUT/$name.check" 2>&1 || rc=1
  report "$name" $rc
}

# run_stdio NAME CLIENT_ARGV... ; the client spawns the tapped server command,
# which is appended after the client's own arguments.
run_stdio() {
  local name=$1; shift
  local log="$OUT/$name.wire.jsonl"
  rm -f "$log"
  timeout 60 "$@" "$NODE" "$TAP" stdio --log "$log" -- "$SERVER" serve --stdio >"$OUT/$name.out" 2>&1
  local rc=$?
  "$NODE" "$TAP" check "$log" --version "$VERSION" --trigger "$TRIGGER" >"$OUT/$name.check" 2>&1 || rc=1
  report "$name" $rc
}

TS=("$NODE" "$TOOLS/clients/interop-ts-client.mjs" --version "$VERSION" --trigger "$TRIGGER")
GOSDK=("$TOOLS/bin/gosdkclient" -version "$VERSION" -trigger "$TRIGGER")
MCPGO=("$TOOLS/bin/mcpgoclient" -version "$VERSION" -trigger "$TRIGGER")

echo "interop $VERSION: bin/mcpwire at $SERVER_URL and on stdio; logs in $OUT$([ $KEEP -eq 0 ] && echo ' (kept on failure)')"
run_http ts-sdk-v2-http "${TS[@]}" --url @URL@
run_http go-sdk-http "${GOSDK[@]}" -url @URL@
run_http mcp-go-http "${MCPGO[@]}" -url @URL@
run_stdio ts-sdk-v2-stdio "${TS[@]}" --
run_stdio go-sdk-stdio "${GOSDK[@]}"
run_stdio mcp-go-stdio "${MCPGO[@]}"

stop_tracked
echo "interop: $PASS passed, $FAIL failed"
if [ $FAIL -eq 0 ] && [ $KEEP -eq 0 ]; then rm -rf "$OUT"; fi
[ $FAIL -eq 0 ]
