#!/bin/bash
# ps.sh NAME BIN MODE: perf stat the server (software events) for 2 s of a 3 s load
name=$1; bin=$2; mode=$3; port=18999; sock=/tmp/l12/run/q.sock; rm -f $sock
raw=0; case $(basename $bin) in raw*) raw=1;; esac
if [[ $raw == 1 ]]; then
  if [[ $mode == tcp ]]; then args="-tcp 127.0.0.1:$port -splice-id"; else args="-unix $sock -splice-id"; fi
else
  if [[ $mode == tcp ]]; then args="serve --tcp 127.0.0.1:$port --log-level error"; else args="serve --unix $sock --log-level error"; fi
fi
nice -n 5 env $ENVX $bin $args & pid=$!
if [[ $mode == tcp ]]; then tgt=tcp://127.0.0.1:$port; else tgt=unix://$sock; fi
sleep 0.4
nice -n 5 /tmp/l12/mcpwire.old load -warmup 0 -d 3s -c 1 -w 64 "$tgt" > /tmp/l12/run/ps.out 2>&1 &
lp=$!
sleep 0.5
perf stat -e task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_nanosleep,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_write,syscalls:sys_enter_tgkill,syscalls:sys_enter_sched_yield -p $pid -- sleep 2 2>&1 | grep -E "task-clock|context|sys_enter"
wait $lp; kill -INT $pid; wait $pid 2>/dev/null
echo "$name $mode $(grep -E '^requests' /tmp/l12/run/ps.out)"
