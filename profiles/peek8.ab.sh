#!/bin/bash
# abc.sh OLD NEW ROUNDS OUT BENCH [BENCHTIME]: alternating rounds of two test binaries (order swapped each round)
A=$1; B=$2; R=$3; OUT=$4; BENCH=$5; BT=${6:-300ms}
: > $OUT
run() { nice -n 5 $1 -test.run XXX -test.bench "$BENCH" -test.benchtime $BT 2>&1 | grep ^Bench | sed "s/^/$2 /" >> $OUT; }
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
