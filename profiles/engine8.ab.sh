#!/bin/bash
# engine8.ab.sh A B ROUNDS OUT: alternating rounds of two sets of test binaries (engine7.ab.sh's
# pattern, nice -n 5, order swapped every round). A and B are prefixes: $A.eng.test,
# $A.ls.test, $A.sh.test (go test -c of engine, transport/linestream, transport/streamhttp), each
# run from its package's directory in the source tree $A.src. Rows: streamhttp
# WrkEcho/mcpwire (cpu-ns/op over 1,000,000 requests), engine TypedEchoPrepared/serial and
# InlineRequest/durations=(on|batched) (1 s), linestream StreamEcho/Inline/(progressToken|noToken)
# (1 s, cpu-ns/msg).
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # prefix label
  p=$1; l=$2
  (cd $p.src/transport/streamhttp && nice -n 5 $p.sh.test -test.run XXX -test.bench 'BenchmarkWrkEcho$/mcpwire' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $p.src/engine && nice -n 5 $p.eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/serial$|BenchmarkInlineRequest/durations=(on|batched)$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $p.src/transport/linestream && nice -n 5 $p.ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(progressToken|noToken)$' -test.benchtime 1s 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
