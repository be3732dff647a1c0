#!/bin/bash
# ab2.sh A B rounds out: alternating rounds; serial benchmarks measured by the process's CPU time (user+sys) over a fixed count
A=$1; B=$2; R=$3; OUT=$4
: > $OUT
cpu() { # dir label bin bench n
  d=$1; l=$2; bin=$3; bench=$4; n=$5
  t=$( { cd $d && /usr/bin/time -f "%U %S" nice -n -19 ./$bin -test.run XXX -test.bench "$bench" -test.benchtime ${n}x >/dev/null; } 2>&1 | tail -1)
  echo "$l $bench-cpu $(python3 -c "u,s='$t'.split(); print('%.1f cpu-ns/op' % ((float(u)+float(s))*1e9/$n))")" >> $OUT
}
run() {
  d=$1; l=$2
  (cd $d && nice -n -19 ./sh.test -test.run XXX -test.bench 'BenchmarkWrkEcho$/mcpwire' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  (cd $d && nice -n -19 ./eng.test -test.run XXX -test.bench 'BenchmarkTypedEchoPrepared/parallel' -test.benchtime 2000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
  cpu $d $l eng.test 'BenchmarkTypedEchoPrepared/serial$' 2000000
  cpu $d $l eng.test 'BenchmarkInlineRequest/durations=on$' 2000000
  cpu $d $l eng.test 'BenchmarkInlineRequest/durations=batched$' 2000000
  (cd $d && nice -n -19 ./ls.test -test.run XXX -test.bench 'BenchmarkStreamEcho/Inline/(progressToken|noToken)$' -test.benchtime 1000000x 2>&1 | grep ^Bench | sed "s/^/$l /") >> $OUT
}
for i in $(seq 1 $R); do
  echo "round $i $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT
  if [ $((i % 2)) = 1 ]; then run $A base; run $B new; else run $B new; run $A base; fi
done
