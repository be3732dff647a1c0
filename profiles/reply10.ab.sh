#!/bin/bash
# reply10.ab.sh A B rounds out: alternating rounds of base (A) and new (B) linestream test binaries
# (ls.test in each dir), order swapped each round, at nice -n 5; each round line carries the load.
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # dir label
  (cd $1 && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(progressToken|typed)$' -test.benchtime 400ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
