#!/bin/bash
# rounds.sh OLD NEW ROUNDS BENCHRE BENCHTIME OUTPREFIX
# Alternates the two test binaries round by round (order swapped every
# round), nice -n -19, -count 1; raw lines to OUTPREFIX.{old,new}.txt, each
# benchmark line tagged with its round in OUTPREFIX.rounds.txt.
old=$1 new=$2 rounds=$3 re=$4 bt=$5 out=$6
: > $out.old.txt; : > $out.new.txt; : > $out.rounds.txt
for r in $(seq 1 $rounds); do
  if [ $((r%2)) = 1 ]; then order="old new"; else order="new old"; fi
  echo "# round $r $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out.rounds.txt
  for w in $order; do
    bin=$old; [ $w = new ] && bin=$new
    nice -n -19 $bin -test.run '^$' -test.bench "$re" -test.benchtime $bt -test.benchmem -test.count 1 > /tmp/c6/round.tmp
    grep -E '^(goos|goarch|pkg|cpu)' /tmp/c6/round.tmp > /tmp/c6/hdr.tmp
    [ $r = 1 ] && cat /tmp/c6/hdr.tmp >> $out.$w.txt
    grep -E '^Benchmark' /tmp/c6/round.tmp >> $out.$w.txt
    grep -E '^Benchmark' /tmp/c6/round.tmp | sed "s/^/$r $w /" >> $out.rounds.txt
  done
done
