#!/bin/bash
# live.sh ROUNDS DUR: base (834ff0c), new (engine5) mcpwire serve --http and rawfast -splice-id,
# each under wrk -t1 -c64 -d DUR -s bench/wrk/fixture.lua after 1 s unmeasured, alternating order;
# cpu_us/req = the server's utime+stime from /proc over the measured run / wrk's requests.
R=${1:-6}; D=${2:-4}
LUA=/work/wt-engine5/bench/wrk/fixture.lua
PORT=27731
tck=$(getconf CLK_TCK)
run() { # name argv...
  local name=$1; shift
  "$@" >/dev/null 2>&1 &
  local pid=$!
  for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
  wrk -t1 -c64 -d1s -s $LUA http://127.0.0.1:$PORT/mcp >/dev/null 2>&1
  local s0=$(awk '{print $14+$15}' /proc/$pid/stat)
  local out=$(wrk -t1 -c64 -d${D}s -s $LUA http://127.0.0.1:$PORT/mcp 2>&1)
  local s1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null
  local req=$(echo "$out" | awk '/requests in/{print $1}')
  local rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  local non2xx=$(echo "$out" | awk '/Non-2xx/{print $NF}')
  python3 -c "print('$name req/s=%s cpu_us/req=%.3f non2xx=%s' % ('$rps', ($s1-$s0)/$tck*1e6/$req, '${non2xx:-0}'))"
}
for r in $(seq $R); do
  echo "round $r $(cut -d' ' -f1-3 /proc/loadavg)"
  if (( r % 2 )); then order="base new raw"; else order="raw new base"; fi
  for w in $order; do
    case $w in
      base) run base nice -n -19 /work/engine5-old/mcpwire serve --http 127.0.0.1:$PORT --log-level error ;;
      new) run new nice -n -19 /work/engine5-new/mcpwire serve --http 127.0.0.1:$PORT --log-level error ;;
      raw) run raw nice -n -19 /work/engine5-new/rawfast -addr 127.0.0.1:$PORT -splice-id ;;
    esac
  done
done
