#!/bin/bash
# peek15.ab.sh A B rounds out: alternating rounds of base (A) and new (B) test binaries (ls.test,
# codec.test in each directory), order swapped each round, nice -n 5 (round9.ab.sh's pattern).
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # dir label
  d=$1; l=$2
  (cd $d && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(progressToken|noToken|typed)$' -test.benchtime 300ms 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $d && nice -n 5 ./codec.test -test.run XXX -test.bench 'BenchmarkPeekLineFixture$|BenchmarkPeekFixture$|BenchmarkSonicGet3Fields$' -test.benchtime 200ms 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
