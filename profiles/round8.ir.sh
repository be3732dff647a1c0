#!/bin/bash
# ir.sh BIN BENCH N1 N2: instructions per iteration = (Ir(N2) - Ir(N1)) / (N2 - N1), counted by valgrind's
# cachegrind (no cache simulation), so that the count does not depend on the load. A run that did not
# PASS is retried; RDTSCP (which valgrind 3.19 lacks) is turned off in the runtime.
export GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off
bin=$1 bench=$2 n1=$3 n2=$4
ir() {
  for t in 1 2 3 4 5; do
    out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $bin -test.run XXX -test.bench "$bench" -test.benchtime ${1}x -test.count 1 2>&1)
    if echo "$out" | grep -q '^PASS'; then echo "$out" | awk '/I *refs:/{gsub(",","",$NF); print $NF}'; return; fi
    echo "retry ($bin $bench $1)" >&2
  done
  echo "ir.sh: $bin $bench ${1}x failed 5 times" >&2; exit 1
}
a=$(ir $n1) || exit 1; b=$(ir $n2) || exit 1
python3 -c "print('%s %s: %.1f instructions/op (Ir %s at %s, %s at %s)' % ('$(basename $bin)', '$bench', ($b-$a)/($n2-$n1), $a, $n1, $b, $n2))"
