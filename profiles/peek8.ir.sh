#!/bin/bash
# ir.sh BIN BENCH N1 N2 : like profiles/engine5.ir.sh, but retries a run that did not PASS (linestream's
# benchmark under valgrind fails now and then) and prints the instructions per op.
bin=$1 bench=$2 n1=$3 n2=$4
ir() {
  for t in 1 2 3 4 5; do
    out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $bin -test.run XXX -test.bench "$bench" -test.benchtime ${1}x -test.count 1 2>&1)
    if echo "$out" | grep -q '^PASS'; then echo "$out" | awk '/I *refs:/{gsub(",","",$NF); print $NF}'; return; fi
    echo "retry ($bin $bench $1): $(echo "$out" | grep -v '^==' | tail -3 | tr '\n' ' ')" >&2
  done
}
a=$(ir $n1); b=$(ir $n2)
python3 -c "print('%s %s: %.1f instructions/op (Ir %s at %s, %s at %s)' % ('$(basename $bin)', '$bench', ($b-$a)/($n2-$n1), $a, $n1, $b, $n2))"
