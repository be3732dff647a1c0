#!/usr/bin/env bash
# .ci/interop-legacy.sh — `make interop-legacy`: real 2025-11-25 clients
# against bin/mcpwire's legacy endpoint (serve --legacy-path /mcp-2025, and
# the opt-in legacy mode on stdio), and against the go-sdk v1.8.0
# everything-server in its stateful mode as a control: the same checks must
# pass on an independent 2025-11-25 implementation, so a failure on ours is
# ours and not the harness's.
#
#   .ci/interop-legacy.sh [--target mcpwire|reference|all] [--out DIR] [--keep]
#                                                       (default: all)
#
# Clients (pinned in interop/npm/legacy, installed by .ci/tools.sh into
# $MCP_TOOLS_HOME, default /tmp/mcpwire-tools):
#   ts-sdk-v1     @modelcontextprotocol/sdk 1.32.2's Client
#                 (.ci/interop-legacy-client.mjs): initialize (2025-11-25,
#                 Mcp-Session-Id issued), ping, logging/setLevel, tools/list,
#                 tools/call test_simple_text, test_trigger_tool_change →
#                 notifications/tools/list_changed, on mcpwire also
#                 resources/subscribe + touch → notifications/resources/updated;
#                 a tool asking for elicitation and one asking for sampling
#                 (on mcpwire the MRTR fixtures: input_required becomes
#                 server→client requests), answered by the client, the
#                 answers in their results;
#                 over HTTP the GET stream, DELETE (2xx) and 404 for the ended
#                 session; on stdio the server exits when its stdin ends
#   inspector-v1  @modelcontextprotocol/inspector-cli 1.0.3 (on mcpwire):
#                 tools/list, tools/call, resources/read, prompts/get over
#                 HTTP, tools/list and tools/call on stdio, one process
#                 each; the printed result is checked
#
# Every run goes through .ci/mcptap.mjs (recording HTTP proxy or stdio
# relay) and the record is checked with `mcptap.mjs check --legacy`: the
# handshake, the session id on every later request, MCP-Protocol-Version,
# the notifications on the GET stream (not on a POST's reply), the server's
# requests on the POST's reply and the client's answers, DELETE, the GET
# stream ended by the server and the 404 after it, no errors. The checker
# must also reject four broken copies of the control's record.
#
# Routing: MIGRATION.md's HAProxy and nginx examples (between their
# haproxy-begin/end and nginx-begin/end markers) must pass `haproxy -c` and
# `nginx -t` (haproxy and nginx are installed from Debian where missing);
# on mcpwire the TS SDK v1 client runs again through each at the public
# path /mcp (routed to /mcp-2025), and `mcpwire probe` through the same URL
# must find a modern server, and a legacy one with --era legacy. HAProxy
# fronts two replicas with in-memory sessions: its stick table must keep
# the session on the replica that issued it.
#
# Prints one line per target x client x transport x check, then
# "interop-legacy: N passed, M failed (Ts)". Exit 1 if anything failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib-server.sh
. "$ROOT/.ci/lib-server.sh"

TARGET=all
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
case "$TARGET" in mcpwire | reference | all) ;; *) echo "interop-legacy.sh: --target mcpwire|reference|all" >&2; exit 2 ;; esac
parse_log_args interop-legacy.sh "${args[@]}"
VERSION=2025-11-25
# The reference server's opt-in: an initialize as the first stdio message
# switches the connection to 2025-11-25.
LEGACY_STDIO_FLAG=--stdio-legacy
TRIGGER=test_trigger_tool_change
TOOLS=$("$ROOT/.ci/tools.sh" node22 servers legacy) || { echo "interop-legacy: installing the pinned clients failed" >&2; exit 1; }
NODE="$TOOLS/bin/node22"
TAP="$ROOT/.ci/mcptap.mjs"
DRIVER="$TOOLS/legacy/interop-legacy-client.mjs"
INSPECTOR="$TOOLS/legacy/node_modules/@modelcontextprotocol/inspector-cli/build/cli.js"
cp "$ROOT/.ci/interop-legacy-client.mjs" "$DRIVER"

go build -o bin/mcpwire ./cmd/mcpwire || exit 1
MCPWIRE="$ROOT/bin/mcpwire"
GOSDK="$TOOLS/bin/gosdk-everything-server"
OUT=${OUT:-$(mktemp -d /tmp/mcpwire-interop-legacy.XXXXXX)}
mkdir -p "$OUT"
trap stop_tracked EXIT

PASS=0 FAIL=0 N=0
pass() { PASS=$((PASS + 1)); printf 'ok   %-9s %-12s %-5s %-34s %s\n' "$1" "$2" "$3" "$4" "$5"; }
fail() {
  FAIL=$((FAIL + 1))
  printf 'FAIL %-9s %-12s %-5s %-34s logs: %s\n' "$1" "$2" "$3" "$4" "$5.*"
  grep -h '"ok":false' "$5.out" 2>/dev/null | grep -v '"step":"verdict"' | head -3 | sed 's/^/       client: /'
  grep -h '^FAIL' "$5.check" 2>/dev/null | head -10 | sed 's/^/       wire:   /'
  grep -h '^FAIL' "$5.result" 2>/dev/null | head -3 | sed 's/^/       result: /'
  [ -s "$5.out" ] && ! grep -q '"step":"verdict"' "$5.out" && tail -5 "$5.out" | sed 's/^/       output: /'
}

# start_http LABEL URLPATH ARGV...: start a server on a free loopback port
# (@PORT@ in ARGV is replaced by it); sets URL.
start_http() {
  local label=$1 path=$2; shift 2
  local try port pid a argv log="$OUT/$label-server-http.log"
  for try in 1 2 3; do
    port=$(free_port)
    argv=()
    for a in "$@"; do argv+=("${a//@PORT@/$port}"); done
    "${argv[@]}" </dev/null >>"$log" 2>&1 &
    pid=$!
    track_pid "$pid"
    if wait_port "$port" "$pid"; then
      URL="http://127.0.0.1:$port$path"
      return 0
    fi
    kill "$pid" 2>/dev/null || true
  done
  echo "interop-legacy: $label's HTTP server did not start; log $log" >&2
  tail -5 "$log" >&2
  return 1
}

# tap_http NAME: a recording proxy in front of $URL; sets TAPPED.
tap_http() {
  local name=$1 portfile="$OUT/$1.port"
  rm -f "$OUT/$name.wire.jsonl" "$portfile"
  "$NODE" "$TAP" http --target "$URL" --log "$OUT/$name.wire.jsonl" --port-file "$portfile" &
  TAP_PID=$!
  track_pid "$TAP_PID"
  for _ in $(seq 100); do [ -s "$portfile" ] && break; sleep 0.05; done
  TAPPED="http://127.0.0.1:$(cat "$portfile" 2>/dev/null)/${URL#http://*/}"
}
untap() { kill "$TAP_PID" 2>/dev/null; wait "$TAP_PID" 2>/dev/null; }

# driver LABEL TRANSPORT [DRIVER_FLAGS...]: the TS SDK v1 client run.
driver() {
  local label=$1 transport=$2; shift 2
  local name="$label-ts-sdk-v1-$transport" base rc check=(--legacy --version "$VERSION" --trigger "$TRIGGER")
  N=$((N + 1)); base="$OUT/$N-$name"
  local touch_uri asks=
  touch_uri=$(printf '%s\n' "$@" | sed -n '/^--uri$/{n;p}')
  [ -n "$touch_uri" ] && check+=(--touch-uri "$touch_uri")
  printf '%s\n' "$@" | grep -qx -- --elicit && asks=elicitation/create
  printf '%s\n' "$@" | grep -qx -- --sample && asks=${asks:+$asks,}sampling/createMessage
  [ -n "$asks" ] && check+=(--server-requests "$asks")
  if [ "$transport" = http ]; then
    tap_http "$N-$name"
    timeout 60 "$NODE" "$DRIVER" --version "$VERSION" --trigger "$TRIGGER" "$@" --url "$TAPPED" >"$base.out" 2>&1
    rc=$?
    untap
    check+=(--delete)
  else
    timeout 60 "$NODE" "$DRIVER" --version "$VERSION" --trigger "$TRIGGER" "$@" -- \
      "$NODE" "$TAP" stdio --log "$base.wire.jsonl" -- "${STDIO_CMD[@]}" >"$base.out" 2>&1
    rc=$?
  fi
  "$NODE" "$TAP" check "$base.wire.jsonl" "${check[@]}" >"$base.check" 2>&1 || rc=1
  LAST_LOG="$base.wire.jsonl" LAST_CHECK=("${check[@]}")
  local wire; wire=$(tail -1 "$base.check" 2>/dev/null | sed 's/^wire [a-z]*: //')
  if [ $rc -eq 0 ]; then
    pass "$label" ts-sdk-v1 "$transport" "$(grep -c '"ok":true' "$base.out") steps" "($wire)"
  else
    fail "$label" ts-sdk-v1 "$transport" "session script" "$base"
  fi
}

# checker_canfail LOG CHECK_ARGS...: the wire checker must reject copies of
# a good record (LOG) that lack what it requires: list_changed moved from
# the GET stream to a POST's reply, no 404 after DELETE, a GET stream the
# server kept open after DELETE, the client's answers to server requests
# removed.
checker_canfail() {
  local log=$1; shift
  local get dir="$OUT/canfail" bad=0 name want
  mkdir -p "$dir"
  get=$(grep -m1 '"http":"GET"' "$log" | sed 's/.*"req":\([0-9]*\).*/\1/')
  [ -n "$get" ] || bad=1
  sed "s/\"req\":$get,\"msgs\":\[{\"method\":\"notifications\/tools\/list_changed\"/\"req\":1,\"msgs\":[{\"method\":\"notifications\/tools\/list_changed\"/" "$log" >"$dir/on-post.jsonl"
  sed 's/"status":404/"status":200/' "$log" >"$dir/no-404.jsonl"
  { grep -v "\"req\":$get,\"end\":true" "$log"; echo "{\"from\":\"client\",\"req\":$get,\"hangup\":true}"; } >"$dir/kept-open.jsonl"
  grep -v '"from":"client".*"msgs":\[{"id":[^]]*"result":true}\]' "$log" >"$dir/no-answers.jsonl"
  for name in on-post:'no notifications/tools/list_changed on the GET stream' no-404:'answered 404 after DELETE' \
    kept-open:'kept the stream of the deleted session open' no-answers:'no answer to the server'; do
    want=${name#*:}
    name=${name%%:*}
    if "$NODE" "$TAP" check "$dir/$name.jsonl" "$@" >"$dir/$name.check" 2>&1 || ! grep -q "$want" "$dir/$name.check"; then
      bad=1
      echo "       checker accepted $name.jsonl or missed /$want/; see $dir/$name.check"
    fi
  done
  if [ $bad -eq 0 ]; then
    pass checker mcptap http "rejects 4 broken records" "(check --legacy can fail)"
  else
    FAIL=$((FAIL + 1))
    printf 'FAIL %-9s %-12s %-5s %-34s\n' checker mcptap http "rejects broken records"
  fi
}

# inspector LABEL TRANSPORT WHAT PREDICATE -- INSPECTOR_ARGS...: one
# inspector-cli run; PREDICATE is a JavaScript expression over r, the JSON
# result it printed, that must be true.
inspector() {
  local label=$1 transport=$2 what=$3 pred=$4; shift 5
  local name="$label-inspector-v1-$transport" base rc
  N=$((N + 1)); base="$OUT/$N-$name"
  if [ "$transport" = http ]; then
    tap_http "$N-$name"
    (cd "$TOOLS/legacy/run" && timeout 60 "$NODE" "$INSPECTOR" --cli "$TAPPED" --transport http "$@") >"$base.out" 2>"$base.err"
    rc=$?
    untap
  else
    # The CLI would take the relay's own flags for its own: one script is
    # the whole server command.
    printf '#!/bin/sh\nexec %q %q stdio --log %q --%s\n' "$NODE" "$TAP" "$base.wire.jsonl" "$(printf ' %q' "${STDIO_CMD[@]}")" >"$base.server.sh"
    chmod +x "$base.server.sh"
    (cd "$TOOLS/legacy/run" && timeout 60 "$NODE" "$INSPECTOR" --cli "$base.server.sh" "$@") >"$base.out" 2>"$base.err"
    rc=$?
  fi
  "$NODE" -e '
    const [file, pred] = process.argv.slice(1);
    const text = require("fs").readFileSync(file, "utf8");
    let r;
    try { r = JSON.parse(text.slice(text.indexOf("{"))); } catch (e) { console.log(`FAIL no JSON result printed: ${e.message}`); process.exit(1); }
    if (!new Function("r", `return (${pred});`)(r)) { console.log(`FAIL result does not satisfy ${pred}: ${JSON.stringify(r).slice(0, 300)}`); process.exit(1); }
  ' "$base.out" "$pred" >"$base.result" 2>&1 || rc=1
  "$NODE" "$TAP" check "$base.wire.jsonl" --legacy --version "$VERSION" >"$base.check" 2>&1 || rc=1
  local wire; wire=$(tail -1 "$base.check" 2>/dev/null | sed 's/^wire [a-z]*: //')
  if [ $rc -eq 0 ]; then
    pass "$label" inspector-v1 "$transport" "$what" "($wire)"
  else
    cat "$base.err" >>"$base.out"
    fail "$label" inspector-v1 "$transport" "$what" "$base"
  fi
}

# inspector_call LABEL TRANSPORT: one tools/call through the Inspector.
inspector_call() {
  inspector "$1" "$2" "tools/call test_simple_text" 'r.content.length === 1 && r.content[0].text.includes("This is a simple text response for testing") && !r.isError' -- --method tools/call --tool-name test_simple_text
}

# inspector_stdio LABEL: the Inspector on stdio (fewer runs: each costs a
# Node start and the SDK's import, about a second of CPU).
inspector_stdio() {
  inspector "$1" stdio "tools/list" 'r.tools.some((t) => t.name === "test_simple_text")' -- --method tools/list
  inspector_call "$1" stdio
}

# inspector_all LABEL TRANSPORT: the Inspector checks on one server.
inspector_all() {
  local l=$1 t=$2
  inspector "$l" "$t" "tools/list" 'r.tools.some((t) => t.name === "test_simple_text") && r.tools.some((t) => t.name === "test_trigger_tool_change")' -- --method tools/list
  inspector_call "$l" "$t"
  inspector "$l" "$t" "resources/read test://static-text" 'r.contents[0].uri === "test://static-text" && r.contents[0].text.length > 0' -- --method resources/read --uri test://static-text
  inspector "$l" "$t" "prompts/get test_prompt_with_arguments" 'r.messages[0].content.text.includes("arg1='"'"'a1'"'"', arg2='"'"'b 2'"'"'")' -- --method prompts/get --prompt-name test_prompt_with_arguments --prompt-args arg1=a1 'arg2=b 2'
}

# haproxy_cfg FILE FRONT_PORT R1_PORT [R2_PORT]: the HAProxy example of
# MIGRATION.md (between its haproxy-begin/end markers), listening on
# FRONT_PORT, its replica r1 at R1_PORT and r2 at R2_PORT (default R1_PORT).
haproxy_cfg() {
  local r2=${4:-$3}
  awk '/<!-- haproxy-begin -->/{on=1;next} /<!-- haproxy-end -->/{on=0} on && !/^```/' "$ROOT/MIGRATION.md" |
    sed -e "s/127\.0\.0\.1:8080\b/127.0.0.1:$2/" -e "s/127\.0\.0\.1:8081\b/127.0.0.1:$3/" -e "s/127\.0\.0\.1:8082\b/127.0.0.1:$r2/" >"$1"
  grep -q "bind 127.0.0.1:$2" "$1" && ! grep -q '127\.0\.0\.1:808[0-9]\b' "$1"
}

# nginx_cfg DIR FRONT_PORT REPLICA_PORT: the nginx example of MIGRATION.md
# (between its nginx-begin/end markers) in DIR/mcp.conf, listening on
# FRONT_PORT, every replica at REPLICA_PORT, inside a minimal DIR/nginx.conf
# whose files all stay in DIR.
nginx_cfg() {
  local dir=$1
  mkdir -p "$dir"
  awk '/<!-- nginx-begin -->/{on=1;next} /<!-- nginx-end -->/{on=0} on && !/^```/' "$ROOT/MIGRATION.md" |
    sed -e "s/127\.0\.0\.1:8080\b/127.0.0.1:$2/" -e "s/127\.0\.0\.1:808[1-9]\b/127.0.0.1:$3/g" >"$dir/mcp.conf"
  printf '%s\n' "daemon off;" "pid $dir/nginx.pid;" "error_log $dir/error.log;" "events {}" "http {" \
    "    access_log off;" "    client_body_temp_path $dir/tmp-body;" "    proxy_temp_path $dir/tmp-proxy;" \
    "    fastcgi_temp_path $dir/tmp-fastcgi;" "    uwsgi_temp_path $dir/tmp-uwsgi;" "    scgi_temp_path $dir/tmp-scgi;" \
    "    include $dir/mcp.conf;" "}" >"$dir/nginx.conf"
  grep -q "listen 127.0.0.1:$2;" "$dir/mcp.conf"
}

# through_balancer NAME CFG_ARGV...: make the balancer's configuration
# (CFG_ARGV, @FRONT@ replaced by a free port), start it ($BALANCER), then
# run the TS SDK v1 client and two probes through it.
through_balancer() {
  local name=$1; shift
  local front pid a argv=()
  front=$(free_port)
  for a in "$@"; do argv+=("${a//@FRONT@/$front}"); done
  if ! "${argv[@]}"; then
    FAIL=$((FAIL + 1))
    echo "FAIL $name: no configuration could be made from MIGRATION.md"
    return
  fi
  "${BALANCER[@]}" </dev/null >>"$OUT/$name.log" 2>&1 &
  pid=$!
  track_pid "$pid"
  if ! wait_port "$front" "$pid"; then
    FAIL=$((FAIL + 1))
    echo "FAIL $name did not start; log $OUT/$name.log"
    tail -3 "$OUT/$name.log" | sed 's/^/       /'
    return
  fi
  local saved=$URL
  URL="http://127.0.0.1:$front/mcp"
  driver "$name" http "${TOUCH[@]}"
  probe_era "$name" "$URL" modern
  probe_era "$name" "$URL" legacy-2025 --era legacy
  URL=$saved
}

# probe_era LABEL URL WANT [PROBE_FLAGS...]: `mcpwire probe` through URL
# reports era WANT.
probe_era() {
  local label=$1 url=$2 want=$3; shift 3
  N=$((N + 1))
  local base="$OUT/$N-$label-probe" era
  timeout 30 "$MCPWIRE" probe --json --timeout 20s "$@" "$url" >"$base.out" 2>&1
  era=$("$NODE" -e 'try { console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).era) } catch { console.log("-") }' "$base.out")
  if [ "$era" = "$want" ]; then
    pass "$label" "mcpwire probe" http "${*:-(default)}" "era $era"
  else
    FAIL=$((FAIL + 1))
    printf 'FAIL %-9s %-12s %-5s %-34s era %s, want %s; log %s\n' "$label" "mcpwire probe" http "${*:-(default)}" "$era" "$want" "$base.out"
  fi
}

start=$SECONDS
echo "interop-legacy $VERSION: TS SDK v1 1.32.2 and Inspector v1 CLI 1.0.3, HTTP and stdio; logs in $OUT$([ $KEEP -eq 0 ] && echo ' (kept on failure)')"

# The HAProxy example of MIGRATION.md must be a valid configuration
# (deploy/cluster.sh --install installs haproxy where it is missing).
command -v haproxy >/dev/null 2>&1 || "$ROOT/deploy/cluster.sh" --install >&2
N=$((N + 1))
if haproxy_cfg "$OUT/$N-migration-haproxy.cfg" 18080 18081 18082 && haproxy -c -q -f "$OUT/$N-migration-haproxy.cfg" >"$OUT/$N-migration-haproxy.out" 2>&1; then
  pass MIGRATION haproxy - "haproxy -c" "$(grep -c . "$OUT/$N-migration-haproxy.cfg") lines valid"
else
  FAIL=$((FAIL + 1))
  printf 'FAIL %-9s %-12s %-5s %-34s log %s\n' MIGRATION haproxy - "haproxy -c" "$OUT/$N-migration-haproxy.out"
  sed 's/^/       /' "$OUT/$N-migration-haproxy.out" | head -5
fi

# The nginx example likewise (nginx -t), with the Debian package where missing.
PATH="$PATH:/usr/sbin"
if ! command -v nginx >/dev/null 2>&1; then
  echo "interop-legacy: installing nginx" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nginx >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nginx >/dev/null; }
fi
N=$((N + 1))
if nginx_cfg "$OUT/$N-migration-nginx" 18080 18081 && nginx -t -q -c "$OUT/$N-migration-nginx/nginx.conf" -p "$OUT/$N-migration-nginx" >"$OUT/$N-migration-nginx.out" 2>&1; then
  pass MIGRATION nginx - "nginx -t" "$(grep -c . "$OUT/$N-migration-nginx/mcp.conf") lines valid"
else
  FAIL=$((FAIL + 1))
  printf 'FAIL %-9s %-12s %-5s %-34s log %s\n' MIGRATION nginx - "nginx -t" "$OUT/$N-migration-nginx.out"
  sed 's/^/       /' "$OUT/$N-migration-nginx.out" | head -5
fi

if [ "$TARGET" != mcpwire ]; then
  # The control: go-sdk's stateful (2025-11-25) Streamable HTTP server; on
  # stdio it answers initialize with 2025-11-25 without any flag.
  ASKS=(--elicit test_elicitation --sample test_sampling) # 2025 style: Session.Elicit, CreateMessage
  if start_http reference /mcp "$GOSDK" -http=127.0.0.1:@PORT@ -stateless=false; then
    driver reference http "${ASKS[@]}"
    checker_canfail "$LAST_LOG" "${LAST_CHECK[@]}"
  else
    FAIL=$((FAIL + 1))
  fi
  STDIO_CMD=("$GOSDK")
  driver reference stdio "${ASKS[@]}"
fi

if [ "$TARGET" != reference ]; then
  # The MRTR tools (input_required) reach old clients as server→client requests.
  TOUCH=(--touch touch --uri test://watched-resource
    --elicit test_input_required_result_elicitation --sample test_input_required_result_sampling)
  if start_http mcpwire /mcp-2025 "$MCPWIRE" serve --http 127.0.0.1:@PORT@ --legacy-path /mcp-2025; then
    driver mcpwire http "${TOUCH[@]}"
    inspector_all mcpwire http
    # One public URL for both eras, routed by MIGRATION.md's HAProxy and
    # nginx examples: the legacy client reaches /mcp-2025 (its session kept
    # on one replica), a modern probe /mcp.
    replica=${URL#http://127.0.0.1:}
    replica=${replica%%/*}
    # HAProxy gets a second replica, with its own in-memory sessions: the
    # legacy client's requests all succeed only if the stick table keeps
    # its session on the replica that issued it.
    saved=$URL
    if start_http mcpwire-r2 /mcp-2025 "$MCPWIRE" serve --http 127.0.0.1:@PORT@ --legacy-path /mcp-2025; then
      replica2=${URL#http://127.0.0.1:}
      replica2=${replica2%%/*}
      URL=$saved
      BALANCER=(haproxy -db -f "$OUT/haproxy.cfg")
      through_balancer haproxy haproxy_cfg "$OUT/haproxy.cfg" @FRONT@ "$replica" "$replica2"
    else
      FAIL=$((FAIL + 1))
    fi
    URL=$saved
    BALANCER=(nginx -c "$OUT/nginx/nginx.conf" -p "$OUT/nginx")
    through_balancer nginx nginx_cfg "$OUT/nginx" @FRONT@ "$replica"
  else
    FAIL=$((FAIL + 1))
  fi
  STDIO_CMD=("$MCPWIRE" serve --stdio "$LEGACY_STDIO_FLAG")
  driver mcpwire stdio "${TOUCH[@]}"
  inspector_stdio mcpwire
fi

stop_tracked
echo "interop-legacy: $PASS passed, $FAIL failed ($((SECONDS - start))s)"
if [ $FAIL -eq 0 ] && [ $KEEP -eq 0 ]; then rm -rf "$OUT"; fi
[ $FAIL -eq 0 ]
