#!/bin/bash
# livesplit.sh ROUNDS: user/sys CPU per request of mcpwire serve --http vs rawfast under wrk 64x1 (fixture.lua)
cd "$(dirname "$0")/.."
R=${1:-3}; D=${D:-5s}
tick=$(getconf CLK_TCK)
for r in $(seq $R); do
 for row in mcpwire rawfast; do
  if [ $row = mcpwire ]; then ${MCP:-bin/mcpwire} serve --http 127.0.0.1:18993 --log-level error & else bin/rawfast -addr 127.0.0.1:18993 -splice-id & fi
  pid=$!; sleep 0.7
  wrk -t1 -c64 -d1s -s bench/wrk/fixture.lua http://127.0.0.1:18993/mcp >/dev/null
  read u0 s0 < <(awk '{print $14, $15}' /proc/$pid/stat)
  out=$(wrk -t1 -c64 -d$D -s bench/wrk/fixture.lua http://127.0.0.1:18993/mcp)
  read u1 s1 < <(awk '{print $14, $15}' /proc/$pid/stat)
  n=$(echo "$out" | awk '/requests in/{print $1}')
  rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  kill $pid; wait $pid 2>/dev/null
  python3 -c "u=($u1-$u0)/$tick*1e6/$n; s=($s1-$s0)/$tick*1e6/$n; print('round $r %-8s rps %9.0f user %.2f sys %.2f total %.2f us/req' % ('$row', $rps, u, s, u+s))"
 done
done
