#!/bin/bash
# http8.ab.sh OLD NEW ROUNDS OUT: alternating rounds of two BenchmarkWrkEcho test binaries (both rows),
# the order flipped every round, the load average noted per round.
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # bin label
  nice -n 5 $1 -test.run XXX -test.bench 'BenchmarkWrkEcho$' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$2 /" >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
