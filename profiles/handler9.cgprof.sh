#!/bin/bash
# cgprof.sh BIN BENCH N1 N2 [TOP]: per-function instructions per op (cachegrind diff of two run lengths)
export GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off
b=$(basename $1); t=/tmp/cg.$$
for n in $3 $4; do valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$t.$n $1 -test.run XXX -test.bench "$2" -test.benchtime ${n}x >/dev/null 2>&1; done
python3 "$(dirname "$0")"/handler9.cgdiff.py $t.$3 $t.$4 $(($4-$3)) ${5:-45}
rm -f $t.*
