#!/bin/bash
# engine12.codec.ab.sh A B rounds out: codec.test PeekLineFixture and PeekFixture 200 ms, alternating, order swapped each round, nice -n 5
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { (cd $1 && nice -n 5 ./codec.test -test.run XXX -test.bench 'BenchmarkPeek(Line)?Fixture$' -test.benchtime 200ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT; }
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
