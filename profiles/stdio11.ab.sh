#!/bin/bash
# ab.sh ROUNDS DUR BIN...: mcpwire load stdio 1x64 against each binary in turn, per round;
# server counters from perf stat (software events only) around the server process.
rounds=$1 d=$2; shift 2
echo "# $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 $rounds); do
  for b in "$@"; do
    f=/tmp/s11/ab.$b.stat
    out=$(nice -n 5 /tmp/s11/mcpwire load -workload call -tool echo -args '{"text":"hello world"}' -c 1 -w 64 -d $d -warmup 0s -json "stdio:/tmp/s11/pwrap2.sh $f /tmp/s11/mcpwire.$b $(if [ $b = raw ]; then echo -splice-id; else echo serve --stdio --log-level error; fi)")
    sleep 0.3
    req=$(echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["requests"], j["rps"])')
    echo "round $r $b req,rps=$req $(grep -v '^#' $f | grep . | awk -F, '{printf "%s=%s ", $3, $1}') load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "# $(date -u) load: $(cut -d' ' -f1-3 /proc/loadavg)"
