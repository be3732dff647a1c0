#!/bin/bash
# pin.sh MODE: runs raw fasthttp, the floor and mcpwire under wrk -t1 -c64 -d3s, 4 rounds each, interleaved.
# MODE=free: no pinning (as make compare). MODE=pin: server on CPU 0 (GOMAXPROCS=1), wrk on CPU 1.
cd "$(dirname "$0")/.."
mode=$1
port=18480
run() { # name cmd...
  local name=$1; shift
  if [ "$mode" = pin ]; then GOMAXPROCS=1 taskset -c 0 "$@" >/dev/null 2>&1 & else "$@" >/dev/null 2>&1 & fi
  local pid=$!
  sleep 0.7
  local W="wrk -t1 -c64 -d1s -s bench/wrk/fixture.lua http://127.0.0.1:$port/mcp"
  [ "$mode" = pin ] && W="taskset -c 1 $W"
  $W >/dev/null 2>&1
  local t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  local out=$(${W/-d1s/-d3s} 2>&1)
  local t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  local rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  local n=$(echo "$out" | awk '/requests in/{print $1}')
  kill $pid; wait $pid 2>/dev/null
  python3 -c "print('%-8s %-5s %10s req/s  srv %.2f us/req' % ('$name','$mode',$rps, ($t1-$t0)*1e4/$n))"
}
for r in 1 2 3 4; do
  run raw bin/rawfast -addr 127.0.0.1:$port -splice-id
  run floor bin/rawfast -addr 127.0.0.1:$port -floor
  run mcpwire bin/mcpwire serve --http 127.0.0.1:$port --log-level error
done
