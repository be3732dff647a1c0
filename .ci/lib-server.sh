# .ci/lib-server.sh — sourced by .ci/conformance.sh and .ci/interop.sh:
# start bin/mcpwire on a free loopback port and stop it (and any helper
# process registered with track_pid) by PID when the script exits.

TRACKED_PIDS=()

# parse_log_args SCRIPT ARGS...: the scripts' shared options. --out DIR keeps
# the logs in DIR; --keep keeps the temporary ones. Sets OUT and KEEP, and
# the tools cache MCP_TOOLS_HOME.
parse_log_args() {
  local script=$1; shift
  OUT="" KEEP=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --out) OUT=$2; KEEP=1; shift 2 ;;
      --keep) KEEP=1; shift ;;
      *) echo "$script: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  export MCP_TOOLS_HOME="${MCP_TOOLS_HOME:-/tmp/mcpwire-tools}"
}

track_pid() { TRACKED_PIDS+=("$1"); }

stop_tracked() {
  local pid
  for pid in "${TRACKED_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${TRACKED_PIDS[@]}"; do
    # give each a moment, then make sure
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  TRACKED_PIDS=()
}

# free_port: print a TCP port that nothing listens on at 127.0.0.1 right now.
free_port() {
  local node=${NODE:-node}
  "$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})'
}

# wait_port PORT PID: wait until 127.0.0.1:PORT accepts a connection while PID
# is alive (at most ~10 s). Returns 1 if PID died or the time ran out.
wait_port() {
  local port=$1 pid=$2
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 1
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# start_http_server BIN LOG: run `BIN serve --http 127.0.0.1:PORT` on a free
# port (plus $SERVE_ARGS, if set); sets SERVER_PORT, SERVER_PID and
# SERVER_URL. Retries with a new port if the chosen one was taken in between.
start_http_server() {
  local bin=$1 log=$2 try
  for try in 1 2 3; do
    SERVER_PORT=$(free_port)
    # shellcheck disable=SC2086 # SERVE_ARGS is a list of words
    "$bin" serve --http "127.0.0.1:$SERVER_PORT" ${SERVE_ARGS:-} </dev/null >>"$log" 2>&1 &
    SERVER_PID=$!
    track_pid "$SERVER_PID"
    if wait_port "$SERVER_PORT" "$SERVER_PID"; then
      SERVER_URL="http://127.0.0.1:$SERVER_PORT/mcp"
      return 0
    fi
    kill "$SERVER_PID" 2>/dev/null || true
    echo "server did not come up on 127.0.0.1:$SERVER_PORT (try $try); its log:" >&2
    tail -5 "$log" >&2
  done
  return 1
}
