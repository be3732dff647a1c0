#!/bin/bash
# four.sh NAME BIN MODE(tcp|unix|stdio) DUR: server CPU per message (utime+stime from /proc/PID/stat over the whole load), ctx switches
name=$1; bin=$2; mode=$3; dur=${4:-3s}; port=18998; sock=/tmp/l12/run/f.sock; rm -f $sock /tmp/l12/run/wrap.pid
raw=0; case $(basename $bin) in raw*) raw=1;; esac
if [[ $mode == stdio ]]; then
  if [[ $raw == 1 ]]; then args="-splice-id"; else args="serve --stdio --log-level error"; fi
  tgt="stdio:/tmp/l12/wrap.sh $bin $args"
  nice -n 5 /tmp/l12/mcpwire.old load -warmup 0 -d $dur -c 1 -w 64 "$tgt" > /tmp/l12/run/four.out 2>&1 &
  lp=$!
  for i in $(seq 50); do [[ -s /tmp/l12/run/wrap.pid ]] && break; sleep 0.02; done
  pid=$(cat /tmp/l12/run/wrap.pid)
else
  if [[ $raw == 1 ]]; then
    if [[ $mode == tcp ]]; then args="-tcp 127.0.0.1:$port -splice-id"; else args="-unix $sock -splice-id"; fi
  else
    if [[ $mode == tcp ]]; then args="serve --tcp 127.0.0.1:$port --log-level error"; else args="serve --unix $sock --log-level error"; fi
  fi
  nice -n 5 env $ENVX $bin $args & pid=$!
  if [[ $mode == tcp ]]; then tgt=tcp://127.0.0.1:$port; else tgt=unix://$sock; fi
  sleep 0.4
  nice -n 5 /tmp/l12/mcpwire.old load -warmup 0 -d $dur -c 1 -w 64 "$tgt" > /tmp/l12/run/four.out 2>&1 &
  lp=$!
fi
snap() {
  read -r ut st < <(awk '{print $14, $15}' /proc/$pid/stat 2>/dev/null)
  cs=0; for t in /proc/$pid/task/*; do cs=$((cs + $(awk '/ctxt_switches/{s+=$2} END{print s+0}' $t/status 2>/dev/null))); done
  echo "$ut $st $cs"
}
a="0 0 0"; last=$(snap)
while kill -0 $lp 2>/dev/null; do s=$(snap); [[ -n ${s%% *} ]] && last=$s; sleep 0.05; done
wait $lp
[[ $mode != stdio ]] && { kill -INT $pid; wait $pid 2>/dev/null; }
req=$(awk '/^requests/{print $2}' /tmp/l12/run/four.out)
python3 - "$name" "$mode" "$req" "$a" "$last" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import sys
name,mode,req,a,b,load=sys.argv[1:]
a=list(map(int,a.split())); b=list(map(int,b.split())); req=int(req)
print(f"{name} {mode} req={req} cpu_us_msg={(b[0]+b[1]-a[0]-a[1])/100*1e6/req:.3f} user={(b[0]-a[0])/100*1e6/req:.3f} sys={(b[1]-a[1])/100*1e6/req:.3f} ctxsw_per_1k={(b[2]-a[2])*1000/req:.2f} load={load}")
PY
