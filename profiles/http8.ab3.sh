#!/bin/bash
# ab3.sh OUT ROUNDS label=bin...: rotating order, BenchmarkWrkEcho$/mcpwire only
OUT=$1; R=$2; shift 2; L=("$@")
: > $OUT
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  n=${#L[@]}
  for j in $(seq 0 $((n-1))); do
    e=${L[$(( (i+j) % n ))]}; lab=${e%%=*}; bin=${e#*=}
    nice -n 5 $bin -test.run XXX -test.bench 'BenchmarkWrkEcho$/mcpwire' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$lab /" >> $OUT
  done
done
