#!/bin/bash
# engine12.ab.sh A B rounds out: engine11.ab.sh's alternating rounds of two directories' test binaries,
# order swapped each round, nice -n 5: ls.test StreamEcho/Inline/(typed|progressToken) 400 ms,
# eng.test TypedEchoPrepared/serial 300 ms, sh.test WrkEcho/mcpwire 300 ms, lg.test ServeCall/modern 300 ms,
# and with CODEC=1 codec.test PeekLineFixture and PeekFixture 200 ms
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
run() { # dir label
  (cd $1 && nice -n 5 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(typed|progressToken)$' -test.benchtime 400ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
  (cd $1 && nice -n 5 ./eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/serial$' -test.benchtime 300ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
  (cd $1 && nice -n 5 ./sh.test -test.run XXX -test.bench 'BenchmarkWrkEcho/mcpwire$' -test.benchtime 300ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
  (cd $1 && nice -n 5 ./lg.test -test.run XXX -test.bench 'BenchmarkServeCall/modern$' -test.benchtime 300ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
  if [ "$CODEC" = 1 ]; then
    (cd $1 && nice -n 5 ./codec.test -test.run XXX -test.bench 'BenchmarkPeek(Line)?Fixture$' -test.benchtime 200ms 2>&1 | grep ^Bench | sed "s/^/$2 /") >> $OUT
  fi
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
