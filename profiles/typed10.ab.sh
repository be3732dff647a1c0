#!/bin/bash
# typed10.ab.sh A B rounds out: alternating A/B (handler9.abt.sh): StreamEcho typed + progressToken, TypedEchoPrepared serial
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { d=$1; l=$2
  (cd $d && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(typed|progressToken)$' -test.benchtime 400ms 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $d && nice -n 5 ./eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/serial$' -test.benchtime 400ms 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
