#!/bin/bash
# threads.sh BIN: run load 4s against BIN; sample per-thread CPU of the server over 2.5 s in the middle.
b=$1
nice -n 5 /tmp/s11/mcpwire load -workload call -c 1 -w 64 -d 4s -warmup 0s -json "stdio:/tmp/s11/mcpwire.$b serve --stdio --log-level error" > /tmp/s11/thr.$b.json &
lp=$!
sleep 0.8
pid=$(pgrep -n -f "^/tmp/s11/mcpwire.$b serve")
snap() { for t in /proc/$pid/task/*; do echo "$(basename $t) $(awk '{print $14+$15}' $t/stat)"; done; }
s1=$(snap); sleep 2.5; s2=$(snap)
wait $lp
rps=$(python3 -c 'import json; print(json.load(open("/tmp/s11/thr.'$b'.json"))["rps"])')
python3 - "$b" "$rps" "$s1" "$s2" <<'PY'
import sys
b, rps = sys.argv[1], float(sys.argv[2])
a = dict(l.split() for l in sys.argv[3].splitlines()); z = dict(l.split() for l in sys.argv[4].splitlines())
d = sorted(((int(z[t]) - int(a.get(t, 0))) * 10 for t in z), reverse=True)  # ms (100 Hz ticks)
req = rps * 2.5
print(f"{b}: rps {rps:.0f}; per-thread CPU ms over 2.5 s: {d}; total {sum(d)} ms = {sum(d)*1e3/req:.3f} us/req; all but the busiest: {sum(d[1:])*1e3/req:.3f} us/req")
PY
