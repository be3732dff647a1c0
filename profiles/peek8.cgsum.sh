#!/bin/bash
# cgsum.sh BIN BENCH N: instructions per op in codec functions (and memeqbody/memequal), by cachegrind's per-function listing
bin=$1; bench=$2; n=$3
for t in 1 2 3 4 5; do
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=${TMPDIR:-/tmp}/cgsum.out $bin -test.run XXX -test.bench "$bench" -test.benchtime ${n}x > ${TMPDIR:-/tmp}/cgsum.log 2>&1
  grep -q '^PASS' ${TMPDIR:-/tmp}/cgsum.log && break
done
cg_annotate --threshold=0 ${TMPDIR:-/tmp}/cgsum.out 2>/dev/null | grep -E "github.com/mcpwire/mcpwire/codec\.[^ ]*$|memeqbody|runtime.memequal" | grep -v "codec.Benchmark\|codec.init" | awk -v n=$n -v b="$(basename $bin) $bench" '{x=$1; gsub(",","",x); s+=x} END {printf "%s: %.1f instructions/op in codec (+memequal)\n", b, s/n}'
