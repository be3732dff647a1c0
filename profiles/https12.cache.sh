#!/bin/bash
# https12.cache.sh BIN BENCH N1 N2: per-iteration instructions and simulated cache misses =
# (count(N2) - count(N1)) / (N2 - N1), from valgrind's cachegrind WITH its cache simulation: I1 32 KiB,
# D1 48 KiB 12-way, LL 1 MiB 16-way (a Zen 5 core's L1 and L2; cachegrind simulates two levels), so
# that what a server's per-connection state costs in the caches shows without hardware counters (the
# VM has none). Same conventions as round8.ir.sh (RDTSCP off, GOMAXPROCS=1, GOGC=off, retries).
export GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off
bin=$1 bench=$2 n1=$3 n2=$4
cg() {
  for t in 1 2 3 4 5; do
    out=$(valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL=1048576,16,64 \
      --cachegrind-out-file=/dev/null $bin -test.run XXX -test.bench "$bench" -test.benchtime ${1}x -test.count 1 2>&1)
    if echo "$out" | grep -q '^PASS'; then
      echo "$out" | awk '/I *refs:/{gsub(",","",$NF); i=$NF} /D1  misses:/{gsub(",","",$4); d=$4} /LLd misses:/{gsub(",","",$4); l=$4} END{print i, d, l}'
      return
    fi
    echo "retry ($bin $bench $1)" >&2
  done
  echo "https12.cache.sh: $bin $bench ${1}x failed 5 times" >&2; exit 1
}
a=$(cg $n1) || exit 1; b=$(cg $n2) || exit 1
python3 -c "
a=[int(x) for x in '$a'.split()]; b=[int(x) for x in '$b'.split()]; n=$n2-$n1
print('%s %s: %.0f Ir/op, %.1f D1 misses/op, %.1f LLd misses/op' % ('$(basename $bin)', '$bench', (b[0]-a[0])/n, (b[1]-a[1])/n, (b[2]-a[2])/n))"
