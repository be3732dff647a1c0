#!/bin/bash
# engine11.ab.sh A B rounds out: alternating rounds of two directories' test binaries (ls.test, eng.test),
# order swapped each round, nice -n 5: StreamEcho/Inline/(typed|progressToken) 400 ms, TypedEchoPrepared/serial 300 ms
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # dir label
  (cd $1 && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(typed|progressToken)$' -test.benchtime 400ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
  (cd $1 && nice -n 5 ./eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/serial$' -test.benchtime 300ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
