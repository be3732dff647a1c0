#!/usr/bin/env bash
# make cluster: redis-server, 3 mcpwire replicas sharing it, and HAProxy in
# front of them (deploy/haproxy.cfg with free ports), all on loopback,
# started and stopped by PID. Runs until Ctrl-C (or SIGTERM), then stops
# everything it started. With CLUSTER=N (N >= 3; make cluster CLUSTER=3)
# the replicas share an N-master Redis Cluster instead (redis-server
# --cluster-enabled yes per node, redis-cli --cluster create, no replicas
# of the masters), named by a seed-list URL; cues then travel by sharded
# pub/sub (SPUBLISH/SSUBSCRIBE).
#
#   deploy/cluster.sh                   interactive
#   deploy/cluster.sh -- CMD ARGS...    run CMD with MCPWIRE_CLUSTER_URL,
#                                       MCPWIRE_CLUSTER_REPLICAS,
#                                       MCPWIRE_CLUSTER_REDIS (the first
#                                       node), MCPWIRE_CLUSTER_STATE (the
#                                       --state URL) and
#                                       MCPWIRE_CLUSTER_PIDS set, then stop
#   deploy/cluster.sh --install         only install redis-server and haproxy
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MCPWIRE_BIN:-bin/mcpwire}

need() { # need COMMAND PACKAGE: install the Debian package when COMMAND is missing
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "cluster: $1 is missing; install the Debian package $2" >&2; exit 1; }
    sudo=sudo
  fi
  echo "cluster: installing $2"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1 ||
    { $sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$2" >/dev/null; }
}
need redis-server redis-server
need haproxy haproxy
[ "${1:-}" = "--install" ] && exit 0
[ -x "$BIN" ] || { echo "cluster: $BIN missing (make build)" >&2; exit 1; }

# freeport: a loopback port nobody listens on now.
used=" "
freeport() {
  local p
  while :; do
    p=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768-)
    case "$used" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      used="$used$p "
      echo "$p"
      return
    fi
  done
}
waitport() { # waitport PORT PID NAME
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || { echo "cluster: $3 exited" >&2; return 1; }
    sleep 0.05
  done
  echo "cluster: $3 not listening on $1" >&2
  return 1
}

dir=$(mktemp -d)
pids=()
stop() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
  exit "$rc"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

masters=${CLUSTER:-0}
names=()
if [ "$masters" -gt 1 ] 2>/dev/null; then
  [ "$masters" -ge 3 ] || { echo "cluster: CLUSTER=$masters: a Redis Cluster needs at least 3 masters" >&2; exit 1; }
  nodes=()
  for i in $(seq 1 "$masters"); do
    while :; do # the cluster bus listens on port + 10000: free too, and below the ephemeral range
      p=$(freeport)
      [ "$p" -lt 22700 ] || continue
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then used="$used$((p + 10000)) "; break; fi
    done
    mkdir "$dir/node$i"
    redis-server --bind 127.0.0.1 --port "$p" --save '' --appendonly no --daemonize no \
      --cluster-enabled yes --cluster-config-file "$dir/node$i/nodes.conf" --cluster-node-timeout 2000 \
      --dir "$dir/node$i" --logfile "$dir/redis$i.log" &
    pids+=($!)
    names+=("redis$i")
    waitport "$p" "$!" "redis-server $i" || { tail -5 "$dir/redis$i.log" >&2; exit 1; }
    nodes+=("127.0.0.1:$p")
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 ||
    { cat "$dir/create.log" >&2; exit 1; }
  for n in "${nodes[@]}"; do
    for _ in $(seq 1 200); do
      redis-cli -p "${n#*:}" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
      sleep 0.05
    done
  done
  rport=${nodes[0]#*:}
  state="redis://${nodes[0]}/0"
  sep='?'
  for n in "${nodes[@]:1}"; do state="$state${sep}addr=$n"; sep='&'; done
else
  rport=$(freeport)
  redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --daemonize no \
    --logfile "$dir/redis.log" &
  pids+=($!)
  names+=(redis)
  waitport "$rport" "$!" redis-server
  state="redis://127.0.0.1:$rport/0"
fi

# One requestState key for the fleet (E5), readable by this user only.
umask 077
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/state.keys"
echo >> "$dir/state.keys"

ports=()
for i in 1 2 3; do
  p=$(freeport)
  "$BIN" serve --http "127.0.0.1:$p" --state "$state" \
    --state-key-file "$dir/state.keys" --trusted-proxy 127.0.0.1/32 \
    --log-level "${LOG_LEVEL:-warn}" ${MCPWIRE_SERVE_FLAGS:-} 2>>"$dir/replica$i.log" &
  pids+=($!)
  names+=("r$i")
  waitport "$p" "$!" "replica $i"
  ports+=("$p")
done

fport=$(freeport)
sed -e "s/127\.0\.0\.1:8080/127.0.0.1:$fport/" \
    -e "s/127\.0\.0\.1:8081/127.0.0.1:${ports[0]}/" \
    -e "s/127\.0\.0\.1:8082/127.0.0.1:${ports[1]}/" \
    -e "s/127\.0\.0\.1:8083/127.0.0.1:${ports[2]}/" deploy/haproxy.cfg > "$dir/haproxy.cfg"
haproxy -c -q -f "$dir/haproxy.cfg"
haproxy -db -f "$dir/haproxy.cfg" 2>>"$dir/haproxy.log" &
pids+=($!)
names+=(haproxy)
waitport "$fport" "$!" haproxy

export MCPWIRE_CLUSTER_URL="http://127.0.0.1:$fport/mcp"
export MCPWIRE_CLUSTER_REPLICAS="http://127.0.0.1:${ports[0]}/mcp http://127.0.0.1:${ports[1]}/mcp http://127.0.0.1:${ports[2]}/mcp"
export MCPWIRE_CLUSTER_REDIS="127.0.0.1:$rport"
export MCPWIRE_CLUSTER_STATE="$state"
MCPWIRE_CLUSTER_PIDS=""
for i in "${!pids[@]}"; do MCPWIRE_CLUSTER_PIDS="$MCPWIRE_CLUSTER_PIDS${MCPWIRE_CLUSTER_PIDS:+ }${names[$i]}=${pids[$i]}"; done
export MCPWIRE_CLUSTER_PIDS
echo "cluster: balancer $MCPWIRE_CLUSTER_URL"
echo "cluster: replicas $MCPWIRE_CLUSTER_REPLICAS"
echo "cluster: state    $MCPWIRE_CLUSTER_STATE (pids $MCPWIRE_CLUSTER_PIDS; logs in $dir)"

if [ "${1:-}" = "--" ]; then
  shift
  "$@"
  exit $?
fi
echo "cluster: Ctrl-C stops everything"
wait -n "${pids[@]}" || true
echo "cluster: a process exited; stopping" >&2
exit 1
