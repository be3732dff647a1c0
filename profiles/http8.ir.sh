#!/bin/bash
# ir.sh BIN BENCH N1 N2: instructions per iteration = (Ir(N2) - Ir(N1)) / (N2 - N1), counted by
# valgrind's cachegrind (no cache simulation), so that the count does not depend on the load.
# http8.ir.sh is engine5.ir.sh with the environment set here.
export GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off # valgrind 3.19 has no RDTSCP, which the runtime uses in lock2 when it spins
bin=$1 bench=$2 n1=$3 n2=$4
ir() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $bin -test.run XXX -test.bench "$bench" -test.benchtime ${1}x -test.count 1 2>&1 >/dev/null | awk '/I *refs:/{gsub(",","",$NF); print $NF}'
}
a=$(ir $n1); b=$(ir $n2)
python3 -c "print('%s %s: %.1f instructions/op (Ir %s at %s, %s at %s)' % ('$(basename $bin)', '$bench', ($b-$a)/($n2-$n1), $a, $n1, $b, $n2))"
