#!/bin/bash
# ab.sh A B rounds out: alternating rounds of base (A) and branch (B) binaries
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # dir label
  d=$1; l=$2
  (cd $d && nice -n -19 ./sh.test -test.run XXX -test.bench 'BenchmarkWrkEcho$/mcpwire' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $d && nice -n -19 ./eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared|BenchmarkInlineRequest/durations=(on|prepared|batched)$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $d && nice -n -19 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(progressToken|noToken)$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
