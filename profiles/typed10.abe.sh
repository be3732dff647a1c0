#!/bin/bash
# typed10.abe.sh A B rounds out: alternating A/B of engine TypedEchoPrepared/serial alone (1 s each, nice 5)
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { d=$1; l=$2
  (cd $d && nice -n 5 ./eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/serial$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
