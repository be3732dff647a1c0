#!/bin/bash
# engine8.ab2.sh A B ROUNDS OUT: engine8.ab.sh over fixed counts (each row's cpu-ns, the process's
# CPU time per op, is what is compared): streamhttp WrkEcho/mcpwire 1,000,000 requests, engine
# TypedEchoPrepared/serial 2,000,000, linestream StreamEcho/Inline/(progressToken|noToken)
# 2,000,000 messages. nice -n 5, order swapped every round.
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # prefix label
  p=$1; l=$2
  (cd $p.src/transport/streamhttp && nice -n 5 $p.sh.test -test.run XXX -test.bench 'BenchmarkWrkEcho$/mcpwire' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $p.src/engine && nice -n 5 $p.eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/serial$' -test.benchtime 2000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $p.src/transport/linestream && nice -n 5 $p.ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(progressToken|noToken)$' -test.benchtime 2000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
