#!/bin/bash
# reply10.ab.typed.sh A B rounds out: reply10.ab.sh for the typed row alone, 1 s per run
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { (cd $1 && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/typed$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT; }
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
