#!/bin/bash
# http8.live.sh OLD NEW ROUNDS OUT: `mcpwire serve --http` of each binary under `wrk -t1 -c64 -d5s -s
# bench/wrk/fixture.lua`, alternating (order flipped each round); the server's CPU per request from
# /proc/PID/stat (utime+stime over the wrk run, clock ticks) and wrk's request count.
A=$1; B=$2; R=$3; OUT=$4; PORT=${PORT:-28880}
TCK=$(getconf CLK_TCK)
: > $OUT
one() { # bin label
  $1 serve --http 127.0.0.1:$PORT >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  w=$(nice -n 5 wrk -t1 -c64 -d5s -s bench/wrk/fixture.lua http://127.0.0.1:$PORT/mcp 2>&1)
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null
  n=$(echo "$w" | awk '/requests in/{print $1}')
  non2xx=$(echo "$w" | awk '/Non-2xx/{print $NF}')
  python3 -c "print('$2 requests %s rps %.0f server-cpu-us/req %.3f non2xx %s' % ($n, $n/5.0, ($c1-$c0)/$TCK*1e6/$n, '${non2xx:-0}'))" >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then one $A base; one $B new; else one $B new; one $A base; fi
done
