#!/bin/bash
# usage: ab.sh OLD NEW ROUNDS OUTPREFIX BENCH BENCHTIME
old=$1 new=$2 rounds=$3 out=$4 bench=$5 bt=$6
: > $out.old.txt; : > $out.new.txt
for r in $(seq 1 $rounds); do
  if (( r % 2 )); then order="old new"; else order="new old"; fi
  for w in $order; do
    bin=$old; [ $w = new ] && bin=$new
    echo "# round $r $w load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out.$w.txt
    nice -n -19 $bin -test.run XXX -test.bench "$bench" -test.benchtime $bt -test.count 1 | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >> $out.$w.txt
  done
done
