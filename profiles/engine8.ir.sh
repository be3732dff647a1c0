#!/bin/bash
# engine8.ir.sh BIN BENCH N1 N2: engine5.ir.sh with retries. Instructions per iteration =
# (Ir(N2) - Ir(N1)) / (N2 - N1), counted by valgrind's cachegrind (no cache simulation), so that
# the count does not depend on the load. Go 1.26's runtime executes RDTSCP (runtime.cputicks, from
# lock2 when sysmon spins on a contended runtime lock), which valgrind 3.19 does not know: such a
# run dies with SIGILL part way and its count is short. A run is kept only if the benchmark's
# result line came out; up to 8 tries.
bin=$1 bench=$2 n1=$3 n2=$4
ir() {
  for try in 1 2 3 4 5 6 7 8; do
    out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $bin -test.run XXX -test.bench "$bench" -test.benchtime ${1}x -test.count 1 2>&1)
    if echo "$out" | grep -qP "^Benchmark\\S*\\s+$1\\s" && ! echo "$out" | grep -q "Unrecognised instruction"; then
      echo "$out" | awk '/I *refs:/{gsub(",","",$NF); print $NF}'
      return
    fi
  done
  echo nan
}
a=$(ir $n1); b=$(ir $n2)
python3 -c "print('%s %s: %.1f instructions/op (Ir %s at %s, %s at %s)' % ('$(basename $bin)', '$bench', (float('$b')-float('$a'))/($n2-$n1), '$a', $n1, '$b', $n2))"
