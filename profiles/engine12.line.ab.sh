#!/bin/bash
# engine12.line.ab.sh A B rounds out: ls.test StreamEcho/Inline/(typed|progressToken) 400 ms, alternating, order swapped, nice -n 5
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { (cd $1 && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(typed|progressToken)$' -test.benchtime 400ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT; }
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
