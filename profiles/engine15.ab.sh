#!/bin/bash
# ab.sh A B rounds out: the typed and progressToken line rows, 1 s per run, alternating, order swapped each round (reply10.ab.typed.sh with both rows)
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { (cd $1 && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(typed|progressToken)$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT; }
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
