#!/bin/bash
# pr.sh NAME BIN MODE: perf record the server 3 s of a 4 s load; writes /tmp/l12/run/NAME.data and .req
name=$1; bin=$2; mode=$3; port=18993; sock=/tmp/l12/run/r.sock; rm -f $sock
if [[ $(basename $bin) == rawgnet* ]]; then
  if [[ $mode == tcp ]]; then args="-tcp 127.0.0.1:$port -splice-id"; else args="-unix $sock -splice-id"; fi
else
  if [[ $mode == tcp ]]; then args="serve --tcp 127.0.0.1:$port --log-level error"; else args="serve --unix $sock --log-level error"; fi
fi
nice -n 5 $bin $args & pid=$!
if [[ $mode == tcp ]]; then tgt=tcp://127.0.0.1:$port; else tgt=unix://$sock; fi
sleep 0.4
nice -n 5 /tmp/l12/mcpwire.old load -warmup 0 -d 4s -c 1 -w 64 "$tgt" > /tmp/l12/run/$name.load 2>&1 &
lp=$!
sleep 0.5
perf record -F 2000 -g -p $pid -o /tmp/l12/run/$name.data -- sleep 3 2>&1 | tail -1
wait $lp
awk '/^requests/{print $2}' /tmp/l12/run/$name.load > /tmp/l12/run/$name.req
kill -INT $pid; wait $pid 2>/dev/null
