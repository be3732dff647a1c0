#!/bin/bash
# usage: ab.sh OLD NEW OUTPREFIX ROUNDS BENCH BENCHTIME
old=$1 new=$2 out=$3 n=$4 bench=$5 bt=$6
: > $out.old.txt; : > $out.new.txt; : > $out.load.txt
for r in $(seq 1 $n); do
  if (( r % 2 )); then order="old new"; else order="new old"; fi
  for w in $order; do
    bin=$old; [[ $w == new ]] && bin=$new
    nice -n -19 $bin -test.run XXX -test.bench "$bench" -test.benchtime $bt -test.count 1 | grep ^Benchmark | sed "s/^/r$r /" >> $out.$w.txt
  done
  echo "round $r $(cat /proc/loadavg)" >> $out.load.txt
done
